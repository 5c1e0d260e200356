import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createTelemetry } from '../../../lambdas/observability/telemetry';
import { traced, traceHandler, tracingEnabled } from '../../../lambdas/observability/tracing';
import { ReadableLogger } from '../../../local/readable-logger';

const IN_LAMBDA = { AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x', POWERTOOLS_TRACE_ENABLED: 'true' };

describe('tracingEnabled', () => {
  it('is on in a Lambda execution environment, with or without POWERTOOLS_TRACE_ENABLED', () => {
    expect(tracingEnabled(IN_LAMBDA)).toBe(true);
    expect(tracingEnabled({ AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x' })).toBe(true);
  });

  it('is off outside Lambda, under SAM local and the Amplify mock, and when turned off', () => {
    expect(tracingEnabled({})).toBe(false);
    expect(tracingEnabled({ POWERTOOLS_TRACE_ENABLED: 'true' })).toBe(false);
    expect(tracingEnabled({ ...IN_LAMBDA, AWS_SAM_LOCAL: 'true' })).toBe(false);
    expect(tracingEnabled({ ...IN_LAMBDA, AWS_EXECUTION_ENV: 'AWS_Lambda_amplify-mock' })).toBe(false);
    expect(tracingEnabled({ ...IN_LAMBDA, POWERTOOLS_TRACE_ENABLED: 'false' })).toBe(false);
    expect(tracingEnabled({ ...IN_LAMBDA, POWERTOOLS_TRACE_ENABLED: 'FALSE' })).toBe(false);
  });
});

describe('the telemetry tracer', () => {
  // Powertools reads the process environment; as Lambda sets it, for one test at a time.
  const inLambda = <T>(build: () => T): T => {
    const saved = { ...process.env };
    Object.assign(process.env, IN_LAMBDA);
    try {
      return build();
    } finally {
      for (const name of Object.keys(IN_LAMBDA)) {
        if (name in saved) process.env[name] = saved[name];
        else delete process.env[name];
      }
    }
  };
  const xrayMiddleware = (client: DynamoDBClient) => client.middlewareStack.identify().filter((name) => /xray/i.test(name));

  it('traces the handler and instruments SDK clients in Lambda', () => {
    const telemetry = inLambda(() => createTelemetry({ functionName: 'catalog', logLevel: 'INFO' }));
    expect(telemetry.tracer?.isTracingEnabled()).toBe(true);
    expect(traceHandler(telemetry)).toHaveLength(1);
    expect(xrayMiddleware(traced(telemetry, new DynamoDBClient({ region: 'eu-west-1' })))).not.toEqual([]);
  });

  it('is absent outside Lambda: no handler subsegment, clients left as they are', () => {
    const telemetry = createTelemetry({ functionName: 'catalog', logLevel: 'INFO' });
    expect(telemetry.tracer).toBeUndefined();
    expect(traceHandler(telemetry)).toEqual([]);
    const client = new DynamoDBClient({ region: 'eu-west-1' });
    expect(traced(telemetry, client)).toBe(client);
    expect(xrayMiddleware(client)).toEqual([]);
  });

  it('is absent in the local runtime, even with Lambda variables set', () => {
    const localLogger = new ReadableLogger({ serviceName: 'modelgate', logLevel: 'INFO' }, () => undefined);
    expect(inLambda(() => createTelemetry({ functionName: 'catalog', logLevel: 'INFO', localLogger })).tracer).toBeUndefined();
  });
});
