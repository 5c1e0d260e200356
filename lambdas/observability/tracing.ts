import type { Tracer } from '@aws-lambda-powertools/tracer';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import type { MiddlewareObj } from '@middy/core';

/**
 * Whether the function traces: in a Lambda execution environment (the runtime sets
 * `AWS_EXECUTION_ENV`), neither under SAM local nor the Amplify mock, and not turned off by
 * `POWERTOOLS_TRACE_ENABLED=false`. The rule Powertools' Tracer applies itself, decided
 * before loading it: a tracer that would be disabled is not loaded at all.
 */
export function tracingEnabled(env: NodeJS.ProcessEnv): boolean {
  const executionEnv = env.AWS_EXECUTION_ENV ?? '';
  if (executionEnv === '' || executionEnv === 'AWS_Lambda_amplify-mock') return false;
  if ((env.AWS_SAM_LOCAL ?? '') !== '') return false;
  return env.POWERTOOLS_TRACE_ENABLED?.toLowerCase() !== 'false';
}

/**
 * Loads the tracer on demand. Loading the X-Ray SDK starts its context tracking
 * (cls-hooked): async hooks on every promise of the process, with a destroy hook each, which
 * cost more than the rest of the wrappers together. Worth it when segments are sent, not
 * otherwise. A `require` in a function, so the Lambda bundle evaluates the module only here.
 */
export function loadTracer(serviceName: string): Tracer {
  const tracing = require('@aws-lambda-powertools/tracer') as typeof import('@aws-lambda-powertools/tracer');
  return new tracing.Tracer({ serviceName, captureHTTPsRequests: true });
}

/** What tracing needs of a function's telemetry (lambdas/observability/telemetry.ts): its tracer, if it traces. */
export interface Traceable {
  readonly tracer: Tracer | undefined;
}

/**
 * Instruments an AWS SDK v3 client for X-Ray when the function traces (one subsegment per
 * call); returns it as it is otherwise.
 */
export function traced<Client>(telemetry: Traceable, client: Client): Client {
  return telemetry.tracer ? telemetry.tracer.captureAWSv3Client(client) : client;
}

/**
 * The handler's X-Ray subsegment (`## index.handler`), without the response (it may carry
 * tokens); nothing when the function does not trace.
 */
export function traceHandler<Event, Result>(telemetry: Traceable): MiddlewareObj<Event, Result>[] {
  return telemetry.tracer ? [captureLambdaHandler(telemetry.tracer, { captureResponse: false }) as MiddlewareObj<Event, Result>] : [];
}
