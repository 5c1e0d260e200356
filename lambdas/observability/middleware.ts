import type { MiddlewareObj } from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { credentialKind } from '../credentials/authenticate';
import { UnauthenticatedError } from '../errors';
import { routeLabel } from '../http/dispatcher';
import { header } from '../http/request';
import { METRIC, countMetric, countRequest, type Telemetry } from './telemetry';
import { traceHandler } from './tracing';

type HttpMiddleware = MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult>;

/**
 * The Powertools middlewares every HTTP function runs, outermost first: the Lambda context
 * (request id, cold start) on every log line, the handler traced when the function traces,
 * and metrics flushed as EMF once per invocation with the cold-start count.
 */
export function powertools(telemetry: Telemetry): HttpMiddleware[] {
  return [
    // logEvent false wins over POWERTOOLS_LOGGER_LOG_EVENT: events carry credentials.
    injectLambdaContext(telemetry.logger, { resetKeys: true, logEvent: false }),
    ...traceHandler<APIGatewayProxyEvent, APIGatewayProxyResult>(telemetry),
    logMetrics(telemetry.metrics, { captureColdStartMetric: true }),
  ];
}

/**
 * One info line per request, after the protocol's error serializer has shaped the reply:
 * route, status, latency and the kind of credential presented. The credential itself, the
 * body and the query are never logged: secrets stay out by construction. Also counts the
 * request by route and status class, and refused credentials by reason.
 */
export function requestLog(telemetry: Telemetry, now: () => number = () => performance.now()): HttpMiddleware {
  const started = new WeakMap<object, number>();
  const finish = (request: { event: APIGatewayProxyEvent; response?: APIGatewayProxyResult | null; error?: unknown }) => {
    const { event } = request;
    const status = request.response?.statusCode ?? 500;
    const route = routeLabel(event);
    const begin = started.get(request) ?? now();
    telemetry.logger.info('request', {
      route,
      status,
      latencyMs: Math.round((now() - begin) * 10) / 10,
      credential: credentialKind(header(event, 'authorization')),
      sourceIp: event.requestContext?.identity?.sourceIp,
      apiRequestId: event.requestContext?.requestId,
    });
    countRequest(telemetry, route, status);
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
