import { Metrics } from '@aws-lambda-powertools/metrics';
import { METRIC, catalogLoadRecorder, countMetric, createTelemetry, recordTokenExchange } from '../../../lambdas/observability/telemetry';
import { captureOutput, emfMetrics, recordingTelemetry } from '../../support/telemetry';

describe('telemetry', () => {
  let output: ReturnType<typeof captureOutput>;
  beforeEach(() => {
    output = captureOutput();
  });
  afterEach(() => output.restore());

  it('counts catalog reloads as EMF and logs the version loaded', () => {
    const telemetry = createTelemetry({ functionName: 'catalog', logLevel: 'INFO' });
    catalogLoadRecorder(telemetry)({ version: 'v7', entries: 421 });
    const records = output.lines().map((line) => JSON.parse(line));
    expect(records.find((r) => r.message === 'catalog loaded')).toMatchObject({ level: 'INFO', function: 'catalog', catalogVersion: 'v7', entries: 421 });
    expect(emfMetrics(output.lines())).toEqual(['CatalogReloads{service=modelgate,function=catalog}']);
  });

  it('counts token exchanges by outcome and reason', () => {
    const telemetry = createTelemetry({ functionName: 'tokenExchange', logLevel: 'INFO' });
    recordTokenExchange(telemetry, 'issued', 'none');
    recordTokenExchange(telemetry, 'refused', 'invalid_grant');
    expect(emfMetrics(output.lines())).toEqual([
      'TokenExchanges{service=modelgate,function=tokenExchange,outcome=issued,reason=none}',
      'TokenExchanges{service=modelgate,function=tokenExchange,outcome=refused,reason=invalid_grant}',
    ]);
  });

  it('emits each count with its own dimensions only, from one instance built at cold start', () => {
    const telemetry = createTelemetry({ functionName: 'tokenExchange', logLevel: 'INFO' });
    const singleMetric = jest.spyOn(Metrics.prototype, 'singleMetric');
    try {
      recordTokenExchange(telemetry, 'refused', 'rate_limited');
      countMetric(telemetry, METRIC.authenticationFailures, { reason: 'expired' });
      catalogLoadRecorder(telemetry)({ version: 'v2', entries: 1 });
      recordTokenExchange(telemetry, 'issued', 'none');
      expect(singleMetric).not.toHaveBeenCalled();
    } finally {
      singleMetric.mockRestore();
    }
    expect(emfMetrics(output.lines())).toEqual([
      'TokenExchanges{service=modelgate,function=tokenExchange,outcome=refused,reason=rate_limited}',
      'AuthenticationFailures{service=modelgate,function=tokenExchange,reason=expired}',
      'CatalogReloads{service=modelgate,function=tokenExchange}',
      'TokenExchanges{service=modelgate,function=tokenExchange,outcome=issued,reason=none}',
    ]);
    // The invocation's own metrics, flushed once at its end, hold none of them.
    expect(telemetry.metrics.hasStoredMetrics()).toBe(false);
  });

  it('keeps metrics in the process when running locally', () => {
    const telemetry = recordingTelemetry('catalog');
    catalogLoadRecorder(telemetry)({ version: 'v1', entries: 3 });
    recordTokenExchange(telemetry, 'issued', 'none');
    telemetry.metrics.publishStoredMetrics();
    expect(output.lines()).toEqual([]);
    expect(telemetry.lines).toEqual([expect.stringMatching(/ INFO  catalog +catalog loaded catalogVersion=v1 entries=3$/)]);
  });
});
