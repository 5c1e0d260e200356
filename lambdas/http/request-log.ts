import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { credentialKind } from '../credentials/authenticate';
import { UnauthenticatedError } from '../errors';
import type { HttpMiddleware } from '../observability/middleware';
import { METRIC, countMetric, countRequest, type Telemetry } from '../observability/telemetry';
import { routeLabel } from './dispatcher';
import { header } from './request';

/**
 * The one info line of a request, once its answer is known: route, status, latency and the kind
 * of credential presented. The credential itself, the body (prompts) and the query are never
 * logged: secrets stay out by construction. Also counts the request by route and status class.
 * Buffered functions write it from their middleware ({@link requestLog}), the streaming one from its
 * own wrapper (functions/inference/handler.ts).
 */
export function logRequest(telemetry: Telemetry, event: APIGatewayProxyEvent, status: number, latencyMs: number): void {
  const route = routeLabel(event);
  telemetry.logger.info('request', {
    route,
    status,
    latencyMs: Math.round(latencyMs * 10) / 10,
    credential: credentialKind(header(event, 'authorization')),
    sourceIp: event.requestContext?.identity?.sourceIp,
    apiRequestId: event.requestContext?.requestId,
  });
  countRequest(telemetry, route, status);
}

/**
 * The request line ({@link logRequest}) after the protocol's error serializer has shaped the
 * reply, and refused credentials counted by reason.
 */
export function requestLog(telemetry: Telemetry, now: () => number = () => performance.now()): HttpMiddleware {
  const started = new WeakMap<object, number>();
  const finish = (request: { event: APIGatewayProxyEvent; response?: APIGatewayProxyResult | null; error?: unknown }) => {
    const begin = started.get(request) ?? now();
    logRequest(telemetry, request.event, request.response?.statusCode ?? 500, now() - begin);
    if (request.error instanceof UnauthenticatedError) {
      countMetric(telemetry, METRIC.authenticationFailures, { reason: request.error.reason });
    }
  };
  return {
    before: async (request) => void started.set(request, now()),
    after: async (request) => finish(request),
    // Runs after the serializer (middy calls onError in reverse order of use): the response is set.
    onError: async (request) => finish(request),
  };
}
