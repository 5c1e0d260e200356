import type { APIGatewayProxyEvent } from 'aws-lambda';
import { credentialKind } from '../credentials/authenticate';
import { routeLabel } from '../http/dispatcher';
import { header } from '../http/request';
import { countRequest, type Telemetry } from './telemetry';

/**
 * The one info line of a request, once its answer is known: route, status, latency and the kind
 * of credential presented. The credential itself, the body (prompts) and the query are never
 * logged: secrets stay out by construction. Also counts the request by route and status class.
 * Buffered functions write it from their middleware (middleware.ts), the streaming one from its
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
