import type { Node } from 'constructs';
import { DEVELOPMENT_PROVIDER, LOG_LEVELS, type LogLevel } from '../lambdas/config';

/**
 * The deployment settings of one modelgate stack. `bin/app.ts` reads them from the CDK
 * context (`modelgate:*` keys in cdk.json, or `-c key=value`); tests pass literals.
 */
export interface ModelgateSettings {
  /**
   * API Gateway stage name; also the `STAGE` environment variable of every function.
   * @default 'v1'
   */
  readonly stageName: string;
  /**
   * Requests to `/api/v1/oauth/token` one client address may send in 5 minutes before
   * the firewall answers 429.
   * @default 100
   */
  readonly wafTokenRateLimit: number;
  /**
   * Requests to any path one client address may send in 5 minutes before the firewall
   * answers 429.
   * @default 2000
   */
  readonly wafGeneralRateLimit: number;
  /**
   * Region name to the hostname that serves it, e.g. `{ eu: 'eu.api.example.com' }`.
   * @default {}
   */
  readonly regionalHostnames: Readonly<Record<string, string>>;
  /**
   * Upper bound on the lifetime of issued access tokens, 60 to 900 (SPEC 8: at most 15 minutes).
   * @default 900
   */
  readonly accessTokenMaxLifetimeSeconds: number;
  /**
   * How stale a function's in-memory catalog may get, 0 to 3600.
   * @default 30
   */
  readonly catalogCacheSeconds: number;
  /**
   * Provider tag, provider or `*` to the OpenAI-compatible base URL that serves it
   * (`https://` only), or `development-echo` for the built-in development provider.
   * @default {} (no upstream: completions answer 503)
   */
  readonly inferenceUpstreams: Readonly<Record<string, string>>;
  /**
   * Seconds to wait for a provider's first byte, and between two streamed chunks, 1 to 300.
   * @default 60
   */
  readonly upstreamTimeoutSeconds: number;
  /**
   * Level of every function's logger: DEBUG, INFO, WARN or ERROR.
   * @default 'INFO'
   */
  readonly logLevel: LogLevel;
  /**
   * ARN of an existing SNS topic that every alarm notifies (on ALARM and on OK), e.g.
   * `arn:aws:sns:eu-west-1:111122223333:modelgate-alarms`.
   * @default no notification: alarms show in the CloudWatch console only
   */
  readonly alarmTopicArn?: string;
  /**
   * The public API base URL, the `iss` and `aud` of issued access tokens, e.g.
   * `https://api.example.com/api/v1` behind a custom domain. Empty: the stage's own URL,
   * `https://<api id>.execute-api.<region>.amazonaws.com/<stage>/api/v1`.
   * @default ''
   */
  readonly apiBaseUrl: string;
  /**
   * Token exchanges one source address may request per window before the token endpoint
   * answers 429 (checked by the function itself, behind the firewall's own rate rule).
   * @default 60
   */
  readonly exchangeRateLimit: number;
  /**
   * The inference function's reserved concurrency, 1 to 100,000: at most this many completions
   * (streams included, each holding an instance for its whole length) run at once, and the
   * other functions (token exchange, JWKS, catalog, management) keep the rest of the account's
   * concurrency. CloudFormation refuses a reservation that leaves fewer than 100 unreserved;
   * docs/operating.md says how to size it.
   * @default no reservation: every function draws from the account's unreserved concurrency
   */
  readonly inferenceReservedConcurrency?: number;
  /**
   * The window of {@link exchangeRateLimit}, 1 to 3600 seconds.
   * @default 60
   */
  readonly exchangeRateWindowSeconds: number;
}

export const DEFAULT_SETTINGS: ModelgateSettings = Object.freeze({
  stageName: 'v1',
  wafTokenRateLimit: 100,
  wafGeneralRateLimit: 2000,
  regionalHostnames: Object.freeze({}),
  accessTokenMaxLifetimeSeconds: 900,
  catalogCacheSeconds: 30,
  inferenceUpstreams: Object.freeze({}),
  upstreamTimeoutSeconds: 60,
  logLevel: 'INFO',
  apiBaseUrl: '',
  exchangeRateLimit: 60,
  exchangeRateWindowSeconds: 60,
});

/** The context key of each setting, e.g. `modelgate:stageName`. */
export const contextKey = (name: keyof ModelgateSettings): string => `modelgate:${name}`;

export class SettingsError extends Error {}

/** The context key that names an instance of the service: its stack and every physical name. */
export const INSTANCE_CONTEXT_KEY = 'modelgate:instance';
export const DEFAULT_INSTANCE_NAME = 'Modelgate';

/**
 * The instance name (`-c modelgate:instance=Staging`): the stack name, and the prefix of every
 * physical name the stack sets, so staging and production share an account and region.
 * CloudFormation stack names are a letter, then letters, digits and hyphens; 64 at most here,
 * so the names built from it stay within KMS alias, log group and alarm name limits.
 */
export function readInstanceName(node: Node): string {
  const value = node.tryGetContext(INSTANCE_CONTEXT_KEY) as unknown;
  if (value === undefined || value === '') return DEFAULT_INSTANCE_NAME;
  if (typeof value !== 'string' || !/^[A-Za-z][A-Za-z0-9-]{0,63}$/.test(value) || value.endsWith('-')) {
    throw new SettingsError(
      `${INSTANCE_CONTEXT_KEY} must be a letter, then up to 63 letters, digits or "-" (not ending in "-"), got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

/**
 * Reads the settings from the context once, applying defaults, and validates them.
 * Values given on the command line (`-c modelgate:wafTokenRateLimit=50`) arrive as
 * strings, so numbers and the hostname map are also accepted in string form.
 */
export function readSettingsFromContext(node: Node): ModelgateSettings {
  const raw = (name: keyof ModelgateSettings): unknown => node.tryGetContext(contextKey(name));
  return validateSettings({
    stageName: asString(raw('stageName'), 'stageName') ?? DEFAULT_SETTINGS.stageName,
    wafTokenRateLimit: asNumber(raw('wafTokenRateLimit'), 'wafTokenRateLimit') ?? DEFAULT_SETTINGS.wafTokenRateLimit,
    wafGeneralRateLimit:
      asNumber(raw('wafGeneralRateLimit'), 'wafGeneralRateLimit') ?? DEFAULT_SETTINGS.wafGeneralRateLimit,
    regionalHostnames: asHostnames(raw('regionalHostnames')) ?? DEFAULT_SETTINGS.regionalHostnames,
    accessTokenMaxLifetimeSeconds:
      asNumber(raw('accessTokenMaxLifetimeSeconds'), 'accessTokenMaxLifetimeSeconds') ??
      DEFAULT_SETTINGS.accessTokenMaxLifetimeSeconds,
    catalogCacheSeconds:
      asNumber(raw('catalogCacheSeconds'), 'catalogCacheSeconds') ?? DEFAULT_SETTINGS.catalogCacheSeconds,
    inferenceUpstreams: asObject(raw('inferenceUpstreams'), 'inferenceUpstreams') ?? DEFAULT_SETTINGS.inferenceUpstreams,
    upstreamTimeoutSeconds:
      asNumber(raw('upstreamTimeoutSeconds'), 'upstreamTimeoutSeconds') ?? DEFAULT_SETTINGS.upstreamTimeoutSeconds,
    logLevel: (asString(raw('logLevel'), 'logLevel') ?? DEFAULT_SETTINGS.logLevel) as LogLevel,
    apiBaseUrl: asString(raw('apiBaseUrl'), 'apiBaseUrl') ?? DEFAULT_SETTINGS.apiBaseUrl,
    exchangeRateLimit: asNumber(raw('exchangeRateLimit'), 'exchangeRateLimit') ?? DEFAULT_SETTINGS.exchangeRateLimit,
    exchangeRateWindowSeconds:
      asNumber(raw('exchangeRateWindowSeconds'), 'exchangeRateWindowSeconds') ?? DEFAULT_SETTINGS.exchangeRateWindowSeconds,
    alarmTopicArn: asString(raw('alarmTopicArn'), 'alarmTopicArn') || undefined,
    inferenceReservedConcurrency: asNumber(raw('inferenceReservedConcurrency'), 'inferenceReservedConcurrency'),
  });
}

const SNS_TOPIC_ARN = /^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}(\.fifo)?$/;

// AWS WAF accepts rate limits from 10 to 2,000,000,000 per evaluation window.
const WAF_RATE_LIMIT_MIN = 10;
const WAF_RATE_LIMIT_MAX = 2_000_000_000;

/**
 * Checks ranges and formats, returning a frozen copy. The ranges match what the
 * functions accept at cold start (lambdas/config.ts), so a bad value fails the synth
 * instead of every cold start after deployment.
 */
export function validateSettings(settings: ModelgateSettings): ModelgateSettings {
  // API Gateway stage names: letters, digits, hyphens and underscores, at most 128.
  if (!/^[A-Za-z0-9_-]{1,128}$/.test(settings.stageName)) {
    fail('stageName', `must be 1 to 128 letters, digits, "-" or "_", got "${settings.stageName}"`);
  }
  checkInteger('wafTokenRateLimit', settings.wafTokenRateLimit, WAF_RATE_LIMIT_MIN, WAF_RATE_LIMIT_MAX);
  checkInteger('wafGeneralRateLimit', settings.wafGeneralRateLimit, WAF_RATE_LIMIT_MIN, WAF_RATE_LIMIT_MAX);
  checkInteger('accessTokenMaxLifetimeSeconds', settings.accessTokenMaxLifetimeSeconds, 60, 900);
  checkInteger('catalogCacheSeconds', settings.catalogCacheSeconds, 0, 3600);
  checkInteger('exchangeRateLimit', settings.exchangeRateLimit, 1, 1_000_000);
  checkInteger('exchangeRateWindowSeconds', settings.exchangeRateWindowSeconds, 1, 3600);
  if (settings.inferenceReservedConcurrency !== undefined) checkInteger('inferenceReservedConcurrency', settings.inferenceReservedConcurrency, 1, 100_000);
  if (settings.apiBaseUrl !== '' && !/^https:\/\/[^/?#\s]+(\/[^?#\s]*[^/?#\s])?$/.test(settings.apiBaseUrl)) {
    fail('apiBaseUrl', `must be an https:// URL without query, fragment or trailing slash, got "${settings.apiBaseUrl}"`);
  }
  checkInteger('upstreamTimeoutSeconds', settings.upstreamTimeoutSeconds, 1, 300);
  const upstreams: Record<string, string> = {};
  for (const [provider, target] of Object.entries(settings.inferenceUpstreams)) {
    if (!/^(\*|[a-z0-9][a-z0-9._-]*(\/[a-z0-9._-]+)?)$/i.test(provider)) fail('inferenceUpstreams', `"${provider}" is not a provider tag`);
    if (target !== DEVELOPMENT_PROVIDER && !isHttpsBaseUrl(target)) {
      fail('inferenceUpstreams', `"${provider}" must map to an https:// base URL or "${DEVELOPMENT_PROVIDER}", got ${JSON.stringify(target)}`);
    }
    upstreams[provider] = target;
  }
  if (!LOG_LEVELS.includes(settings.logLevel)) {
    fail('logLevel', `must be one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(settings.logLevel)}`);
  }
  if (settings.alarmTopicArn !== undefined && !SNS_TOPIC_ARN.test(settings.alarmTopicArn)) {
    fail('alarmTopicArn', `must be the ARN of an SNS topic, got ${JSON.stringify(settings.alarmTopicArn)}`);
  }
  const hostnames: Record<string, string> = {};
  for (const [region, host] of Object.entries(settings.regionalHostnames)) {
    if (!/^[a-z0-9-]+$/.test(region)) fail('regionalHostnames', `region "${region}" must be lowercase letters, digits or "-"`);
    if (typeof host !== 'string' || !/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$/i.test(host)) {
      fail('regionalHostnames', `"${region}" must map to a hostname, got ${JSON.stringify(host)}`);
    }
    hostnames[region] = host.toLowerCase();
  }
  return Object.freeze({ ...settings, regionalHostnames: Object.freeze(hostnames), inferenceUpstreams: Object.freeze(upstreams) });
}

function checkInteger(name: keyof ModelgateSettings, value: number, min: number, max: number): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    fail(name, `must be an integer from ${min} to ${max}, got ${value}`);
  }
}

function fail(name: keyof ModelgateSettings, message: string): never {
  throw new SettingsError(`${contextKey(name)} ${message}`);
}

function asString(value: unknown, name: keyof ModelgateSettings): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') fail(name, `must be a string, got ${JSON.stringify(value)}`);
  return value;
}

function asNumber(value: unknown, name: keyof ModelgateSettings): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'number') return value;
  if (typeof value === 'string' && value.trim() !== '' && !Number.isNaN(Number(value))) return Number(value);
  return fail(name, `must be a number, got ${JSON.stringify(value)}`);
}

function isHttpsBaseUrl(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' && !url.search && !url.hash;
  } catch {
    return false;
  }
}

function asHostnames(value: unknown): Record<string, string> | undefined {
  return asObject(value, 'regionalHostnames');
}

const OBJECT_SHAPE = { regionalHostnames: 'region to hostname', inferenceUpstreams: 'provider to base URL' } as const;

function asObject(value: unknown, name: keyof typeof OBJECT_SHAPE): Record<string, string> | undefined {
  if (value === undefined) return undefined;
  let parsed = value;
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value);
    } catch {
      fail(name, `must be a JSON object of ${OBJECT_SHAPE[name]}`);
    }
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    fail(name, `must be an object of ${OBJECT_SHAPE[name]}`);
  }
  return parsed as Record<string, string>;
}
