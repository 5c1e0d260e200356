import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Tracer } from '@aws-lambda-powertools/tracer';
import { loadTracer, tracingEnabled } from './tracing';

/** The levels a function may log at. */
export const LOG_LEVELS = ['DEBUG', 'INFO', 'WARN', 'ERROR'] as const;
/** One of {@link LOG_LEVELS}. */
export type LogLevel = (typeof LOG_LEVELS)[number];

/** `service` of every log line and metric; the function name tells functions apart. */
export const SERVICE_NAME = 'modelgate';
/** CloudWatch namespace of the service's EMF metrics (docs/operating.md lists them). */
export const METRICS_NAMESPACE = 'modelgate';

/**
 * The metrics the service emits, by name, so alarms, dashboards and code agree. Every one is
 * a count with the dimensions named beside it (plus `service`).
 */
export const METRIC = {
  /** Every API and OAuth request: `function`, `route`, `statusClass` (2xx, 4xx, 5xx). */
  requests: 'Requests',
  /** Refused credentials (docs/reference.md#scopes-and-access): `function`, `reason`. */
  authenticationFailures: 'AuthenticationFailures',
  /** The in-memory catalog was (re)loaded from the table: `function`. */
  catalogReloads: 'CatalogReloads',
  /** Token exchanges (docs/reference.md#the-token-exchange): `outcome` (issued, refused), `reason`. */
  tokenExchanges: 'TokenExchanges',
} as const;

/**
 * Logger, metrics and tracer of one function: built once per cold start by its composition
 * root and handed to the protocol wrapper (`apiHandler`, `oauthHandler`), which logs one line
 * per request and flushes metrics after it.
 */
export interface Telemetry {
  readonly functionName: string;
  readonly logger: Logger;
  readonly metrics: Metrics;
  /**
   * The X-Ray tracer when tracing runs ({@link tracingEnabled}: in Lambda, as the stack
   * deploys every function); otherwise none, and the X-Ray SDK is never loaded.
   */
  readonly tracer: Tracer | undefined;
  /**
   * Emits the counts that carry dimensions of their own ({@link countMetric}): one
   * single-metric instance built at cold start, flushed by each count, reused.
   */
  readonly counts: Metrics;
}

/** How a function's telemetry is built: its name, its log level, and the local runtime's logger. */
export interface TelemetryOptions {
  /** The function's name in logs and metric dimensions, e.g. `catalog`. */
  readonly functionName: string;
  readonly logLevel: LogLevel;
  /**
   * A logger to use instead of the JSON one (the local runtime passes a readable one);
   * metrics and traces then stay in the process: there is no CloudWatch or X-Ray to read
   * them.
   */
  readonly localLogger?: Logger;
}

/**
 * Builds the telemetry of one function, once per cold start. In Lambda: JSON logs, EMF
 * metrics, X-Ray traces. Reads the process environment, as Powertools does.
 */
export function createTelemetry(options: TelemetryOptions): Telemetry {
  const local = options.localLogger !== undefined;
  const logger =
    options.localLogger?.createChild({ persistentKeys: { function: options.functionName } }) ??
    new Logger({ serviceName: SERVICE_NAME, logLevel: options.logLevel, persistentKeys: { function: options.functionName } });
  // Every metric carries the function name; Powertools' own warnings go through the logger.
  const metricOptions = { namespace: METRICS_NAMESPACE, serviceName: SERVICE_NAME, defaultDimensions: { function: options.functionName }, logger };
  const metrics = local ? new DiscardedMetrics(metricOptions) : new Metrics(metricOptions);
  // Tracing needs the Lambda X-Ray daemon; locally every capture would log a missing segment.
  const tracer = !local && tracingEnabled(process.env) ? loadTracer(SERVICE_NAME) : undefined;
  return { functionName: options.functionName, logger, metrics, tracer, counts: metrics.singleMetric() };
}

/** Counts a catalog (re)load and logs it: how often containers see a new catalog version. */
export function catalogLoadRecorder(telemetry: Telemetry): (loaded: { version: string | undefined; entries: number }) => void {
  return ({ version, entries }) => {
    telemetry.logger.info('catalog loaded', { catalogVersion: version, entries });
    countMetric(telemetry, METRIC.catalogReloads, {});
  };
}

/** How a token exchange ended (docs/reference.md#the-token-exchange): an access token issued, or a refusal. */
export type TokenExchangeOutcome = 'issued' | 'refused';

/**
 * Counts one token exchange by outcome and reason (`issued`/`none`, `refused`/`invalid_grant`,
 * `refused`/`rate_limited`, ...), for the exchange function.
 */
export function recordTokenExchange(telemetry: Telemetry, outcome: TokenExchangeOutcome, reason: string): void {
  countMetric(telemetry, METRIC.tokenExchanges, { outcome, reason });
}

/**
 * Emits one count with its own dimensions (beside `service` and `function`) at once, apart
 * from the request's own metrics. Synchronous from the first dimension to the flush, so
 * concurrent invocations never mix their dimensions in the shared instance.
 */
export function countMetric(telemetry: Telemetry, name: string, dimensions: Readonly<Record<string, string>>): void {
  const { counts } = telemetry;
  for (const key in dimensions) counts.addDimension(key, dimensions[key]!);
  // A single-metric instance flushes on addMetric and clears the dimensions just added.
  counts.addMetric(name, MetricUnit.Count, 1);
}

/**
 * Counts the request by route and status class in the invocation's own metrics, which the
 * Powertools middleware flushes as one EMF record when the invocation ends.
 */
export function countRequest(telemetry: Telemetry, route: string, status: number): void {
  telemetry.metrics.addDimensions({ route, statusClass: `${Math.floor(status / 100)}xx` });
  telemetry.metrics.addMetric(METRIC.requests, MetricUnit.Count, 1);
}

/** Metrics that are dropped: the local runtime has nowhere to send EMF. */
class DiscardedMetrics extends Metrics {
  constructor(private readonly options: ConstructorParameters<typeof Metrics>[0] = {}) {
    super(options);
  }

  override publishStoredMetrics(): this {
    this.clearMetrics();
    this.clearDimensions();
    return this;
  }

  override singleMetric(): Metrics {
    return new DiscardedMetrics({ ...this.options, singleMetric: true });
  }
}
