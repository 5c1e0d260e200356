import { normalizeHostname } from './http/request';
import { TABLE_SCHEMAS, type TableId } from './store/table-schemas';

/**
 * Service configuration, parsed once per cold start from the environment into a frozen
 * object. A missing or malformed value fails the cold start with a message naming it.
 */
export interface ServiceConfig {
  readonly tables: Readonly<Partial<Record<TableId, string>>>;
  /** Region name to the hostname that serves it, e.g. `{ eu: 'eu.api.example.com' }`. */
  readonly regionalHostnames: Readonly<Record<string, string>>;
  /** How stale the in-memory catalog may get before it is checked against the table. */
  readonly catalogCacheSeconds: number;
  /** SPEC 8: access tokens live at most 15 minutes. */
  readonly accessTokenMaxLifetimeSeconds: number;
  /** KMS key that signs access tokens (AWS only). */
  readonly signingKeyArn?: string;
  /** File holding the local ES256 signing key (local runtime only). */
  readonly localSigningKeyPath?: string;
  readonly stage: string;
  /**
   * The service's API base URL, e.g. `https://api.example.com/api/v1`: the `iss` and `aud`
   * of issued access tokens. Required by the functions that issue or accept them.
   */
  readonly apiBaseUrl?: string;
  /** SPEC 8: token exchanges one source address may request per window. */
  readonly exchangeRateLimit: number;
  readonly exchangeRateWindowSeconds: number;
  /**
   * Accept issuer and JWKS URLs on loopback hosts (127.0.0.0/8, ::1, localhost), so a
   * development identity provider works against the local runtime. Never on a deployed stage.
   * @default false
   */
  readonly allowLoopbackIssuers: boolean;
}

/** Set by the local runtime only (`MODELGATE_ALLOW_LOOPBACK_ISSUERS=0` turns it off there). */
export const ALLOW_LOOPBACK_ISSUERS_ENV = 'MODELGATE_ALLOW_LOOPBACK_ISSUERS';

export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv, requiredTables: readonly TableId[]): ServiceConfig {
  const tables: Partial<Record<TableId, string>> = {};
  for (const id of requiredTables) {
    const name = env[TABLE_SCHEMAS[id].envVar];
    if (!name) throw new ConfigError(`${TABLE_SCHEMAS[id].envVar} is not set`);
    tables[id] = name;
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
    signingKeyArn: env.SIGNING_KEY_ARN || undefined,
    localSigningKeyPath: env.LOCAL_SIGNING_KEY_PATH || undefined,
    stage,
    allowLoopbackIssuers,
    apiBaseUrl: parseBaseUrl(env.API_BASE_URL),
    exchangeRateLimit: parseNumber(env, 'EXCHANGE_RATE_LIMIT', 60, 1, 1_000_000),
    exchangeRateWindowSeconds: parseNumber(env, 'EXCHANGE_RATE_WINDOW_SECONDS', 60, 1, 3600),
  });
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

/** An absolute URL without a trailing slash; plain HTTP only on a loopback host (the local runtime). */
function parseBaseUrl(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`API_BASE_URL must be an absolute URL, got "${raw}"`);
  }
  const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
    throw new ConfigError(`API_BASE_URL must be an https:// URL, got "${raw}"`);
  }
  if (url.search || url.hash || raw.endsWith('/')) throw new ConfigError(`API_BASE_URL must have no query, fragment or trailing slash, got "${raw}"`);
  return raw;
}

function parseFlag(env: NodeJS.ProcessEnv, name: string): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '' || raw === '0' || raw === 'false') return false;
  if (raw === '1' || raw === 'true') return true;
  throw new ConfigError(`${name} must be 1 or 0, got "${raw}"`);
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
