import type { APIGatewayProxyResult } from 'aws-lambda';

const JSON_HEADERS = { 'Content-Type': 'application/json' } as const;

/** A JSON response from a value. */
export function json(statusCode: number, body: unknown, headers: Record<string, string> = {}): APIGatewayProxyResult {
  return { statusCode, headers: { ...JSON_HEADERS, ...headers }, body: JSON.stringify(body) };
}

/** A JSON response from an already serialized body (hot paths build it by hand). */
export function rawJson(statusCode: number, body: string, headers: Record<string, string> = {}): APIGatewayProxyResult {
  return { statusCode, headers: { ...JSON_HEADERS, ...headers }, body };
}
