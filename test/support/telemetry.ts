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

/** What the function writes to stdout and stderr, as Lambda would ship it to CloudWatch. */
export function captureOutput(): { lines: () => string[]; restore: () => void } {
  const written: string[] = [];
  const spies = [process.stdout, process.stderr].map((stream) =>
    jest.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    }),
  );
  return {
    lines: () => written.join('').split('\n').filter(Boolean),
    restore: () => spies.forEach((spy) => spy.mockRestore()),
  };
}

/** Every metric in the EMF records among `lines`, as `name{dimension=value,...}`. */
export function emfMetrics(lines: readonly string[]): string[] {
  return lines
    .map((line) => JSON.parse(line) as Record<string, any>)
    .filter((record) => '_aws' in record)
    .flatMap((record) =>
      (record._aws.CloudWatchMetrics as { Dimensions: string[][]; Metrics: { Name: string }[] }[]).flatMap((directive) =>
        directive.Metrics.map((m) => `${m.Name}{${directive.Dimensions[0]!.map((d) => `${d}=${record[d]}`).join(',')}}`),
      ),
    );
}
