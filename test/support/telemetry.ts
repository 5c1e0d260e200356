import type { Context } from 'aws-lambda';
import { createTelemetry, SERVICE_NAME, type Telemetry } from '../../lambdas/observability/telemetry';
import { ReadableLogger } from '../../local/readable-logger';

/** Telemetry whose log lines are kept for assertions; metrics and traces stay in the process. */
export function recordingTelemetry(functionName: string): Telemetry & { lines: string[] } {
  const lines: string[] = [];
  const logger = new ReadableLogger({ serviceName: SERVICE_NAME, logLevel: 'INFO' }, (line) => lines.push(line));
  return Object.assign(createTelemetry({ functionName, logLevel: 'INFO', localLogger: logger }), { lines });
}

/** The Lambda context a handler is invoked with. */
export function lambdaContext(functionName = 'test-function', awsRequestId = 'c6af9ac6-7b61-11e6-9a41-93e812345678'): Context {
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:eu-west-1:111122223333:function:${functionName}`,
    memoryLimitInMB: '256',
    awsRequestId,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: '2026/11/21/[$LATEST]abcdef',
    getRemainingTimeInMillis: () => 10_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}
