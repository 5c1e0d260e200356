import { ANY_ORIGIN, parseCorsOrigins } from './http/cors';
import { isServiceBaseUrl, normalizeHostname } from './hostname';
import { TargetProblem, readApiTarget, type UpstreamTarget } from './providers/targets';

/**
 * The settings of one modelgate instance, one name each from the CDK context
 * (`modelgate:<name>`) through the `Modelgate` construct's props to the functions' configuration;
 * {@link SETTINGS} gives each its environment variable, default and range.
 */
export interface Settings {
  /** The instance's name: the CLI's stack name and the prefix of every physical name. @default 'Modelgate' */
  readonly instance: string;
  /** API Gateway stage name; `STAGE` of every function. @default 'v1' */
  readonly stageName: string;
  /** Requests to `/api/v1/oauth/token` one client address may send in 5 minutes before the firewall answers 429. @default 100 */
  readonly wafTokenRateLimit: number;
  /** Requests to any path one client address may send in 5 minutes before the firewall answers 429. @default 2000 */
  readonly wafGeneralRateLimit: number;
  /** Region name to the hostname that serves it, e.g. `{ eu: 'eu.api.example.com' }` (docs/reference.md#listing-rules rule 4). @default {} */
  readonly regionalHostnames: Readonly<Record<string, string>>;
  /** Upper bound on the lifetime of issued access tokens, 60 to 900 (docs/reference.md#limits: at most 15 minutes). @default 900 */
  readonly accessTokenMaxLifetimeSeconds: number;
  /** How stale a function's in-memory catalog may get, 0 to 3600. @default 30 */
  readonly catalogCacheSeconds: number;
  /**
   * Once a container finds the catalog changed, it reloads it after a random wait up to this
   * long, 0 to 3600: a fleet of containers reloads over the spread, not in one burst. @default 300
   */
  readonly catalogReloadSpreadSeconds: number;
  /**
   * Provider tag, provider or `*` to its upstream (docs/providers.md): a base URL of an upstream
   * that speaks the public API (`https://`, or `http://` on a loopback host), `development-echo`
   * for the built-in development provider, or a provider's own API (`{ "api": "openai" |
   * "anthropic" | "bedrock", "baseUrl"?, "region"?, "models"? }`).
   * @default {} (no upstream: completions answer 503)
   */
  readonly inferenceUpstreams: Readonly<Record<string, UpstreamTarget>>;
  /** Seconds to wait for a provider's first byte, and between two streamed chunks, 1 to 300. @default 60 */
  readonly upstreamTimeoutSeconds: number;
  /** Days a kept response stays (docs/api.md#the-responses-api). */
  readonly responseRetentionDays: number;
  /** Level of every function's logger: DEBUG, INFO, WARN or ERROR. @default 'INFO' */
  readonly logLevel: LogLevel;
  /** ARN of an existing SNS topic every alarm notifies, on ALARM and on OK. @default none */
  readonly alarmTopicArn?: string;
  /**
   * The public API base URL, the `iss` and `aud` of issued access tokens (docs/reference.md#access-tokens), e.g.
   * `https://api.example.com/api/v1`. Empty: `https://<domainName>/api/v1` with a custom domain,
   * else the stage's own URL. The functions always get the resolved URL.
   * @default ''
   */
  readonly apiBaseUrl: string;
  /** Token exchanges one source address may request per window before the token endpoint answers 429 (docs/reference.md#limits). @default 60 */
  readonly exchangeRateLimit: number;
  /** The window of {@link exchangeRateLimit}, 1 to 3600 seconds. @default 60 */
  readonly exchangeRateWindowSeconds: number;
  /**
   * The inference function's reserved concurrency, 1 to 100,000: at most this many completions
   * (streams included, each holding an instance for its whole length) run at once, and the
   * other functions (token exchange, JWKS, catalog, management) keep the rest of the account's
   * concurrency. CloudFormation refuses a reservation that leaves fewer than 100 unreserved;
   * docs/operating.md says how to size it. Only the stack reads it.
   * @default no reservation: every function draws from the account's unreserved concurrency
   */
  readonly inferenceReservedConcurrency?: number;
  /** The API's own hostname, e.g. `api.example.com`, served with every regional hostname. @default none */
  readonly domainName?: string;
  /** The Route 53 hosted zone holding the domain and every regional hostname, by id (no lookup). @default none */
  readonly hostedZoneId?: string;
  /** That zone's name, e.g. `example.com`. @default none */
  readonly hostedZoneName?: string;
  /** Instead of the zone: an ACM certificate in the stack's region covering every hostname. @default none */
  readonly certificateArn?: string;
  /**
   * Whether the public catalog (`GET /models`, `/models/count`, `/model/{author}/{slug}`,
   * `/providers`) answers callers without a credential. Off: a deployment's catalog says which
   * models and prices it serves, an anonymous request costs a function invocation behind only
   * the firewall's rate rule, and the clients that list models (the `openai` client, the
   * official SDK, LangChain) send the key they are given anyway.
   * @default false
   */
  readonly publicCatalog: boolean;
  /**
   * The origins whose pages may call the API from a browser (CORS): `['*']` for any, or a list
   * of origins such as `https://app.example.com`. The settings page stays same-origin only.
   * @default ['*']
   */
  readonly corsAllowedOrigins: readonly string[];
}

export { LOG_LEVELS, type LogLevel } from './observability/telemetry';
import { LOG_LEVELS, type LogLevel } from './observability/telemetry';

/** The upstream value that selects the deterministic in-process provider. */
export const DEVELOPMENT_PROVIDER = 'development-echo';

/** A value refused by its setting's range; the reader says where it came from. */
export class SettingProblem extends Error {}

/** How a setting's value is read, from the context, props, or its environment variable, and written back to it. */
export interface SettingKind<T> {
  /** The value in its one normal form (trimmed, lower-cased hostnames, frozen maps), or throws a {@link SettingProblem}. */
  read(raw: unknown): T;
  /** The value as its environment variable holds it. */
  write(value: T): string;
}

/** One setting's row of {@link SETTINGS}: its environment variable, default and range. */
export interface SettingRow<T> {
  /** The variable the functions read it from; none for what only the stack uses. */
  readonly env?: string;
  readonly default: T;
  readonly kind: SettingKind<T>;
}

type Rows = { readonly [K in keyof Settings]-?: SettingRow<Settings[K]> };

const HOSTNAME = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+\.?$/i;
const WAF_RATE_LIMIT = integer(10, 2_000_000_000); // AWS WAF's range per evaluation window

/**
 * The one table of settings: each one's environment variable, default and range. The stack
 * reads the context through it (lib/settings.ts), the `Modelgate` construct checks its props
 * with it, the functions read their environment through it (lambdas/config.ts), and the local
 * runtime reads its environment record through it (local/runtime.ts).
 */
export const SETTINGS = {
  instance: { default: 'Modelgate', kind: instanceName() },
  stageName: { env: 'STAGE', default: 'v1', kind: text(/^[A-Za-z0-9_-]{1,128}$/, '1 to 128 letters, digits, "-" or "_"') },
  wafTokenRateLimit: { default: 100, kind: WAF_RATE_LIMIT },
  wafGeneralRateLimit: { default: 2000, kind: WAF_RATE_LIMIT },
  regionalHostnames: { env: 'REGIONAL_HOSTNAMES', default: Object.freeze({}), kind: hostnameMap() },
  accessTokenMaxLifetimeSeconds: { env: 'ACCESS_TOKEN_MAX_LIFETIME_SECONDS', default: 900, kind: integer(60, 900) },
  catalogCacheSeconds: { env: 'CATALOG_CACHE_SECONDS', default: 30, kind: integer(0, 3600) },
  catalogReloadSpreadSeconds: { env: 'CATALOG_RELOAD_SPREAD_SECONDS', default: 300, kind: integer(0, 3600) },
  inferenceUpstreams: { env: 'INFERENCE_UPSTREAMS', default: Object.freeze(Object.create(null)), kind: upstreamMap() },
  // The inference function's own timeout is 5 minutes: a longer wait could never end in an answer.
  upstreamTimeoutSeconds: { env: 'UPSTREAM_TIMEOUT_SECONDS', default: 60, kind: integer(1, 300) },
  // How long a kept response (`store`) stays for `GET /responses/{id}` and `previous_response_id`.
  responseRetentionDays: { env: 'RESPONSE_RETENTION_DAYS', default: 30, kind: integer(1, 365) },
  logLevel: { env: 'LOG_LEVEL', default: 'INFO', kind: choice(LOG_LEVELS) },
  alarmTopicArn: { default: undefined, kind: optional(text(/^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}(\.fifo)?$/, 'the ARN of an SNS topic')) },
  apiBaseUrl: { env: 'API_BASE_URL', default: '', kind: baseUrl() },
  exchangeRateLimit: { env: 'EXCHANGE_RATE_LIMIT', default: 60, kind: integer(1, 1_000_000) },
  exchangeRateWindowSeconds: { env: 'EXCHANGE_RATE_WINDOW_SECONDS', default: 60, kind: integer(1, 3600) },
  inferenceReservedConcurrency: { default: undefined, kind: optional(integer(1, 100_000)) },
  domainName: { default: undefined, kind: optional(hostname()) },
  hostedZoneId: { default: undefined, kind: optional(text(/^[A-Z0-9]{1,32}$/, 'a Route 53 hosted zone id')) },
  hostedZoneName: { default: undefined, kind: optional(hostname()) },
  certificateArn: {
    default: undefined,
    kind: optional(text(/^arn:aws[a-z-]*:acm:[a-z0-9-]+:\d{12}:certificate\/[A-Za-z0-9-]{1,128}$/, 'the ARN of an ACM certificate')),
  },
  publicCatalog: { env: 'PUBLIC_CATALOG', default: false, kind: flag() },
  corsAllowedOrigins: { env: 'CORS_ALLOWED_ORIGINS', default: Object.freeze([ANY_ORIGIN]), kind: origins() },
} as const satisfies Rows;

/** The name of a setting, as the CDK context (`modelgate:<name>`) and the props spell it. */
export type SettingName = keyof Settings;
/** The settings the functions read, each from its environment variable. */
export type EnvironmentSettingName = { [K in SettingName]: (typeof SETTINGS)[K] extends { env: string } ? K : never }[SettingName];

/** Every setting at its default. */
export const DEFAULT_SETTINGS: Settings = Object.freeze(
  Object.fromEntries(Object.entries(SETTINGS).map(([name, row]) => [name, row.default])) as Settings,
);

/** The environment variables of `names`, as the functions read them, from `settings`. */
export function settingsEnvironment(settings: Partial<Settings>, names: readonly EnvironmentSettingName[]): Record<string, string> {
  const environment: Record<string, string> = {};
  for (const name of names) {
    const row = SETTINGS[name] as SettingRow<unknown>;
    const value = settings[name];
    if (value !== undefined) environment[row.env!] = row.kind.write(value);
  }
  return environment;
}

function integer(min: number, max: number): SettingKind<number> {
  return {
    read(raw) {
      const value = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : raw;
      if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
        throw new SettingProblem(`must be an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`);
      }
      return value;
    },
    write: String,
  };
}

function text(pattern: RegExp, what: string): SettingKind<string> {
  return {
    read(raw) {
      if (typeof raw !== 'string' || !pattern.test(raw)) throw new SettingProblem(`must be ${what}, got ${JSON.stringify(raw)}`);
      return raw;
    },
    write: String,
  };
}

/** Names of hosts as the service compares them: lower case, without the trailing dot of a fully qualified name. */
function hostname(): SettingKind<string> {
  return {
    read(raw) {
      if (typeof raw !== 'string' || !HOSTNAME.test(raw)) throw new SettingProblem(`must be a hostname, got ${JSON.stringify(raw)}`);
      return normalizeHostname(raw);
    },
    write: String,
  };
}

/** CloudFormation stack names: a letter, then letters, digits and hyphens; 64 here, so the names built from it fit KMS alias, log group and alarm limits. */
function instanceName(): SettingKind<string> {
  return {
    read(raw) {
      if (typeof raw !== 'string' || !/^[A-Za-z][A-Za-z0-9-]{0,63}$/.test(raw) || raw.endsWith('-')) {
        throw new SettingProblem(`must be a letter, then up to 63 letters, digits or "-" (not ending in "-"), got ${JSON.stringify(raw)}`);
      }
      return raw;
    },
    write: String,
  };
}

/** `true` or `false`, or their text; `1` or `0` as the functions' environment holds it. */
function flag(): SettingKind<boolean> {
  return {
    read(raw) {
      if (typeof raw === 'boolean') return raw;
      if (raw === 'true' || raw === '1') return true;
      if (raw === 'false' || raw === '0') return false;
      throw new SettingProblem(`must be true or false (1 or 0), got ${JSON.stringify(raw)}`);
    },
    write: (value) => (value ? '1' : '0'),
  };
}

/**
 * `*` or origins as browsers send them (lambdas/http/cors.ts): a list, or its text as `-c` and
 * environment variables give it, comma-separated or a JSON array. Held as a frozen list.
 */
function origins(): SettingKind<readonly string[]> {
  return {
    read(raw) {
      const fail = (message: string): never => {
        throw new SettingProblem(message);
      };
      return Object.freeze([...parseCorsOrigins(originList(raw), fail)]);
    },
    write: (value) => value.join(','),
  };
}

function originList(raw: unknown): readonly unknown[] {
  if (Array.isArray(raw)) return raw;
  if (typeof raw !== 'string') throw new SettingProblem(`must be "*" or a list of origins, got ${JSON.stringify(raw)}`);
  if (!raw.trim().startsWith('[')) return raw.split(',').map((origin) => origin.trim());
  try {
    const parsed: unknown = JSON.parse(raw);
    if (Array.isArray(parsed)) return parsed;
  } catch {
    // Reported below, as any other malformed list.
  }
  throw new SettingProblem('must be "*" or a JSON array of origins');
}

function choice<C extends string>(values: readonly C[]): SettingKind<C> {
  return {
    read(raw) {
      const value = typeof raw === 'string' ? raw.toUpperCase() : raw;
      if (!values.includes(value as C)) throw new SettingProblem(`must be one of ${values.join(', ')}, got ${JSON.stringify(raw)}`);
      return value as C;
    },
    write: String,
  };
}

function optional<T>(kind: SettingKind<T>): SettingKind<T | undefined> {
  return { read: (raw) => (raw === undefined || raw === '' ? undefined : kind.read(raw)), write: (value) => (value === undefined ? '' : kind.write(value)) };
}

/**
 * An absolute `https://` URL without query, fragment or trailing slash; plain `http://` on a
 * loopback host only (the local runtime). Empty means "derived" (see {@link Settings.apiBaseUrl}).
 */
function baseUrl(): SettingKind<string> {
  return {
    read(raw) {
      if (raw === '') return '';
      if (typeof raw !== 'string' || !isServiceBaseUrl(raw)) {
        throw new SettingProblem(`must be an https:// URL (http:// on a loopback host) without query, fragment or trailing slash, got ${JSON.stringify(raw)}`);
      }
      return raw;
    },
    write: String,
  };
}

/** One entry of `inferenceUpstreams`: a base URL, the development provider, or a provider API (lambdas/providers/targets.ts). */
function upstreamTarget(provider: string, target: unknown): UpstreamTarget {
  if (target === DEVELOPMENT_PROVIDER) return target;
  if (typeof target === 'string' && isServiceBaseUrl(target, true)) return target.replace(/\/+$/, '');
  if (typeof target === 'object' && target !== null && !Array.isArray(target)) {
    try {
      return readApiTarget(target as Record<string, unknown>);
    } catch (error) {
      if (error instanceof TargetProblem) throw new SettingProblem(`"${provider}" ${error.message}`);
      throw error;
    }
  }
  throw new SettingProblem(
    `"${provider}" must map to an https:// base URL (http:// on a loopback host), "${DEVELOPMENT_PROVIDER}" or an object with "api", got ${JSON.stringify(target)}`,
  );
}

/** A JSON object (or its text, as `-c` and environment variables give it) of string values, keyed without a prototype. */
function objectOf(raw: unknown, shape: string): Record<string, unknown> {
  let parsed = raw;
  if (typeof raw === 'string') {
    try {
      parsed = JSON.parse(raw);
    } catch {
      throw new SettingProblem(`must be a JSON object of ${shape}`);
    }
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new SettingProblem(`must be an object of ${shape}`);
  return parsed as Record<string, unknown>;
}

function hostnameMap(): SettingKind<Readonly<Record<string, string>>> {
  return {
    read(raw) {
      const hostnames: Record<string, string> = Object.create(null);
      for (const [region, host] of Object.entries(objectOf(raw, 'region to hostname'))) {
        if (!/^[a-z0-9-]+$/.test(region)) throw new SettingProblem(`region "${region}" must be lowercase letters, digits or "-"`);
        if (typeof host !== 'string' || !HOSTNAME.test(host)) throw new SettingProblem(`"${region}" must map to a hostname, got ${JSON.stringify(host)}`);
        // Compared with the request's normalised Host, so normalised the same way.
        hostnames[region] = normalizeHostname(host);
      }
      return Object.freeze(hostnames);
    },
    write: (value) => JSON.stringify({ ...value }),
  };
}

/** Provider to its upstream, keyed without a prototype, so a tag such as `constructor` finds nothing inherited. */
function upstreamMap(): SettingKind<Readonly<Record<string, UpstreamTarget>>> {
  return {
    read(raw) {
      const upstreams: Record<string, UpstreamTarget> = Object.create(null);
      for (const [provider, target] of Object.entries(objectOf(raw, 'provider to upstream'))) {
        if (!/^(\*|[a-z0-9][a-z0-9._-]*(\/[a-z0-9._-]+)?)$/i.test(provider)) throw new SettingProblem(`"${provider}" is not a provider tag`);
        upstreams[provider] = upstreamTarget(provider, target);
      }
      return Object.freeze(upstreams);
    },
    write: (value) => JSON.stringify({ ...value }),
  };
}
