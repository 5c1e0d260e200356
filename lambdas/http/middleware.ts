import middy, { type MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { toErrorBody } from './api-errors';
import { json } from './responses';

export type ApiHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

export interface Logger {
  error(message: string, fields?: Record<string, unknown>): void;
}

/** Structured JSON lines on stderr; never given secrets (handlers pass ids and hashes only). */
export const consoleLogger: Logger = {
  error(message, fields) {
    console.error(JSON.stringify({ level: 'error', message, ...fields }));
  },
};

/**
 * Serializes every thrown error as a SPEC 7.1 body. Unexpected errors are logged with the
 * request id and answered with a bare 500, so internals never reach the caller.
 */
export function apiErrors(logger: Logger = consoleLogger): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> {
  return {
    onError: async (request) => {
      const { status, body } = toErrorBody(request.error);
      if (status >= 500) {
        const error = request.error as Error | undefined;
        logger.error('unhandled error', {
          requestId: request.context?.awsRequestId,
          path: request.event?.path,
          error: error?.name,
          detail: error?.message,
          stack: error?.stack,
        });
      }
      request.response = json(status, body);
    },
  };
}

/** Wraps a plain handler in middy with the API error serializer. */
export function apiHandler(handler: ApiHandler, logger?: Logger) {
  return middy<APIGatewayProxyEvent, APIGatewayProxyResult>().use(apiErrors(logger)).handler(handler);
}
