import type { MiddlewareObj } from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type { Telemetry } from './telemetry';
import { traceHandler } from './tracing';

/** A middy middleware of an API Gateway proxy function. */
export type HttpMiddleware = MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult>;

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
