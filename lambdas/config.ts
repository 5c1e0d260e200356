import { ANY_ORIGIN, parseCorsOrigins } from './http/cors';
import { normalizeHostname } from './http/request';
import { TABLE_SCHEMAS, type TableId } from './aws/table-schemas';

/** Where `POST /chat/completions` sends completions (SPEC 4.5). */
export interface InferenceConfig {
  /**
   * `INFERENCE_UPSTREAMS`: provider tag (`novita/fp8`), provider (`novita`) or `*` to the
   * OpenAI-compatible base URL that serves it, or {@link DEVELOPMENT_PROVIDER} for the
   * built-in development provider. Empty: completions answer 503.
   */
  readonly upstreams: Readonly<Record<string, string>>;
  /** `UPSTREAM_TIMEOUT_SECONDS`: wait for the first byte, and between two stream chunks. */
  readonly upstreamTimeoutSeconds: number;
  /** `PROVIDER_CREDENTIALS_SECRET_ARN`: the Secrets Manager secret with the provider keys. */
  readonly providerCredentialsSecretArn?: string;
}

/** The upstream value that selects the deterministic in-process provider. */
export const DEVELOPMENT_PROVIDER = 'development-echo';

export const LOG_LEVELS = ['DEBUG', 'INFO', 'WARN', 'ERROR'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Settings only some functions need; a function names the ones it cannot start without. */
export interface FunctionSettings {
  /** KMS key that signs access tokens (`SIGNING_KEY_ARN`). */
  readonly signingKeyArn: string;
  /** Inference upstreams and provider credentials; see {@link InferenceConfig}. */
  readonly inference: InferenceConfig;
  /** Folder of the settings pages' built assets, inside the function package (`PAGE_ASSETS_DIR`). */
  readonly pageAssetsDir: string;
  /**
   * `API_BASE_URL`: the service's API base URL, e.g. `https://api.example.com/api/v1`, the
   * `iss` and `aud` of issued access tokens (SPEC 2.13). HTTPS; plain HTTP only on a
   * loopback host (the local runtime).
   */
  readonly apiBaseUrl: string;
}

/** What one function reads: its tables and the settings it cannot start without. */
export interface FunctionRequirements<T extends TableId = TableId, S extends keyof FunctionSettings = keyof FunctionSettings> {
  readonly tables: readonly T[];
  readonly settings?: readonly S[];
}

/**
 * Service configuration, parsed once per cold start from the environment into a frozen
 * object. A missing or malformed value fails the cold start with a message naming it.
 * `tables` holds exactly the tables the function declared, so code cannot reach another.
 */
export type ServiceConfig<T extends TableId = never, S extends keyof FunctionSettings = never> = Readonly<
  {
    tables: Readonly<Record<T, string>>;
    /** Region name to the hostname that serves it, e.g. `{ eu: 'eu.api.example.com' }`. */
    regionalHostnames: Readonly<Record<string, string>>;
    /** How stale the in-memory catalog may get before it is checked against the table. */
    catalogCacheSeconds: number;
    /** SPEC 8: access tokens live at most 15 minutes. */
    accessTokenMaxLifetimeSeconds: number;
    /** SPEC 8: token exchanges one source address may request per window (`EXCHANGE_RATE_LIMIT`). */
    exchangeRateLimit: number;
    /** `EXCHANGE_RATE_WINDOW_SECONDS`. */
    exchangeRateWindowSeconds: number;
    /** `LOG_LEVEL` of the function's logger. */
    logLevel: LogLevel;
    stage: string;
    /**
     * Accept issuer and JWKS URLs on loopback hosts (127.0.0.0/8, ::1, localhost), so a
     * development identity provider works against the local runtime. Never on a deployed stage.
     * @default false
     */
    allowLoopbackIssuers: boolean;
    /**
     * `PUBLIC_CATALOG`: the public catalog's routes answer callers without a credential.
     * @default false
     */
    publicCatalog: boolean;
    /**
     * `CORS_ALLOWED_ORIGINS`: `*`, or a comma-separated list of the origins whose pages may
     * call the API (lambdas/http/cors.ts). @default ['*']
     */
    corsAllowedOrigins: readonly string[];
  } & Pick<FunctionSettings, S>
>;

/** Set by the local runtime only (`MODELGATE_ALLOW_LOOPBACK_ISSUERS=0` turns it off there). */
export const ALLOW_LOOPBACK_ISSUERS_ENV = 'MODELGATE_ALLOW_LOOPBACK_ISSUERS';

export class ConfigError extends Error {}

const SETTING_ENV: Readonly<Record<keyof FunctionSettings, string>> = {
  signingKeyArn: 'SIGNING_KEY_ARN',
  inference: 'INFERENCE_UPSTREAMS',
  pageAssetsDir: 'PAGE_ASSETS_DIR',
  apiBaseUrl: 'API_BASE_URL',
};

export function loadConfig<T extends TableId, S extends keyof FunctionSettings = never>(
  env: NodeJS.ProcessEnv,
  requirements: FunctionRequirements<T, S>,
): ServiceConfig<T, S> {
  const tables: Partial<Record<TableId, string>> = {};
  for (const id of requirements.tables) {
    const name = env[TABLE_SCHEMAS[id].envVar];
    if (!name) throw new ConfigError(`${TABLE_SCHEMAS[id].envVar} is not set`);
    tables[id] = name;
  }
  const settings: Partial<Record<keyof FunctionSettings, unknown>> = {};
  for (const name of requirements.settings ?? []) {
    const raw = env[SETTING_ENV[name]];
    if (!raw) throw new ConfigError(`${SETTING_ENV[name]} is not set`);
    settings[name] =
      name === 'inference' ? parseInference(env, raw) : name === 'apiBaseUrl' ? parseBaseUrl(SETTING_ENV[name], raw) : raw;
  }
  const stage = env.STAGE || 'local';
  const allowLoopbackIssuers = parseFlag(env, ALLOW_LOOPBACK_ISSUERS_ENV);
  if (allowLoopbackIssuers && stage !== 'local') {
    throw new ConfigError(`${ALLOW_LOOPBACK_ISSUERS_ENV} is for the local runtime only, not stage "${stage}"`);
  }
  return Object.freeze({
    tables: Object.freeze(tables),
    regionalHostnames: Object.freeze(parseHostnames(env.REGIONAL_HOSTNAMES)),
    catalogCacheSeconds: parseNumber(env, 'CATALOG_CACHE_SECONDS', 30, 0, 3600),
    accessTokenMaxLifetimeSeconds: parseNumber(env, 'ACCESS_TOKEN_MAX_LIFETIME_SECONDS', 900, 60, 900),
    exchangeRateLimit: parseNumber(env, 'EXCHANGE_RATE_LIMIT', 60, 1, 1_000_000),
    exchangeRateWindowSeconds: parseNumber(env, 'EXCHANGE_RATE_WINDOW_SECONDS', 60, 1, 3600),
    logLevel: env.LOG_LEVEL ? parseChoice('LOG_LEVEL', env.LOG_LEVEL.toUpperCase(), LOG_LEVELS) : 'INFO',
    stage,
    allowLoopbackIssuers,
    publicCatalog: parseFlag(env, 'PUBLIC_CATALOG'),
    corsAllowedOrigins: Object.freeze(parseOrigins(env.CORS_ALLOWED_ORIGINS)),
    ...settings,
  }) as unknown as ServiceConfig<T, S>;
}

function parseChoice<C extends string>(name: string, raw: string, allowed: readonly C[]): C {
  if (!allowed.includes(raw as C)) throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
  return raw as C;
}

/** An absolute URL without query, fragment or trailing slash. */
function parseBaseUrl(name: string, raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be an absolute URL, got "${raw}"`);
  }
  const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
    throw new ConfigError(`${name} must be an https:// URL, got "${raw}"`);
  }
  if (url.search || url.hash || raw.endsWith('/')) throw new ConfigError(`${name} must have no query, fragment or trailing slash, got "${raw}"`);
  return raw;
}

function parseNumber(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

function parseFlag(env: NodeJS.ProcessEnv, name: string): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '' || raw === '0' || raw === 'false') return false;
  if (raw === '1' || raw === 'true') return true;
  throw new ConfigError(`${name} must be 1 or 0, got "${raw}"`);
}

function parseOrigins(raw: string | undefined): readonly string[] {
  const values = raw === undefined || raw.trim() === '' ? [ANY_ORIGIN] : raw.split(',').map((origin) => origin.trim());
  return parseCorsOrigins(values, (message) => {
    throw new ConfigError(`CORS_ALLOWED_ORIGINS ${message}`);
  });
}

function parseHostnames(raw: string | undefined): Record<string, string> {
  if (!raw) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConfigError('REGIONAL_HOSTNAMES must be a JSON object of region to hostname');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError('REGIONAL_HOSTNAMES must be a JSON object of region to hostname');
  }
  const out: Record<string, string> = {};
  for (const [region, host] of Object.entries(parsed)) {
    if (typeof host !== 'string' || host === '') throw new ConfigError(`REGIONAL_HOSTNAMES.${region} must be a hostname`);
    // Compared with the request's normalised Host, so normalised the same way.
    out[region] = normalizeHostname(host);
  }
  return out;
}

function parseInference(env: NodeJS.ProcessEnv, upstreams: string): InferenceConfig {
  return Object.freeze({
    upstreams: Object.freeze(parseUpstreams(upstreams)),
    upstreamTimeoutSeconds: parseNumber(env, 'UPSTREAM_TIMEOUT_SECONDS', 60, 1, 900),
    providerCredentialsSecretArn: env.PROVIDER_CREDENTIALS_SECRET_ARN || undefined,
  });
}

/** Provider to base URL; parsed without a prototype, so a tag such as `constructor` finds nothing inherited. */
export function parseUpstreams(raw: string): Record<string, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConfigError('INFERENCE_UPSTREAMS must be a JSON object of provider to base URL');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError('INFERENCE_UPSTREAMS must be a JSON object of provider to base URL');
  }
  const out: Record<string, string> = Object.create(null);
  for (const [provider, target] of Object.entries(parsed)) {
    if (target === DEVELOPMENT_PROVIDER) {
      out[provider] = target;
      continue;
    }
    let url: URL | undefined;
    try {
      url = typeof target === 'string' ? new URL(target) : undefined;
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.search || url.hash) {
      throw new ConfigError(`INFERENCE_UPSTREAMS.${provider} must be an http(s) base URL or "${DEVELOPMENT_PROVIDER}"`);
    }
    out[provider] = (target as string).replace(/\/+$/, '');
  }
  return out;
}
