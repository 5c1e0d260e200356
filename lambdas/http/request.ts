import type { APIGatewayProxyEvent } from 'aws-lambda';
import { BadRequestError, PayloadTooLargeError } from './api-errors';

/** Header lookup that ignores case, as HTTP does (API Gateway keeps the client's case). */
export function header(event: Pick<APIGatewayProxyEvent, 'headers'>, name: string): string | undefined {
  const headers = event.headers ?? {};
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === wanted && value !== undefined) return value;
  }
  return undefined;
}

/** The raw body as text, decoding API Gateway's base64 form. */
export function bodyText(event: Pick<APIGatewayProxyEvent, 'body' | 'isBase64Encoded'>): string {
  if (event.body == null) return '';
  return event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
}

/** The body parsed as a JSON object; 400 for anything else, 413 past `maxBytes`. */
export function jsonBody(
  event: Pick<APIGatewayProxyEvent, 'body' | 'isBase64Encoded'>,
  maxBytes = 64 * 1024,
): Record<string, unknown> {
  const text = bodyText(event);
  if (Buffer.byteLength(text, 'utf8') > maxBytes) {
    throw new PayloadTooLargeError(`Request body is larger than ${maxBytes} bytes`);
  }
  if (text.trim() === '') throw new BadRequestError('Request body must be a JSON object');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new BadRequestError('Request body is not valid JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new BadRequestError('Request body must be a JSON object');
  }
  return parsed as Record<string, unknown>;
}
