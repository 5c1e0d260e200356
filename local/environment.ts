import { ALLOW_LOOPBACK_ISSUERS_ENV } from '../lambdas/config';
import { SETTINGS, SettingProblem } from '../lambdas/settings';
import type { LocalRuntimeOptions } from './runtime-options';

/**
 * `npm start`'s environment variables, read once here so the runtime itself never reads
 * `process.env`: `PORT` (default 8787), `MODELGATE_DATA_DIR` (default `.local`),
 * `MODELGATE_ALLOW_LOOPBACK_ISSUERS=0` (judge issuer hosts as a deployed stack does), and the
 * settings `exchangeRateLimit`, `publicCatalog`, `corsAllowedOrigins` and `inferenceUpstreams`
 * as `MODELGATE_EXCHANGE_LIMIT`, `MODELGATE_PUBLIC_CATALOG=1`, `MODELGATE_CORS_ALLOWED_ORIGINS`
 * (comma-separated) and `MODELGATE_INFERENCE_UPSTREAMS` (a JSON map), with the defaults and
 * ranges of lambdas/settings.ts (docs/architecture.md#the-local-runtime describes each). A
 * malformed value fails the start with a message naming it.
 */
export function localRuntimeOptionsFromEnvironment(
  env: NodeJS.ProcessEnv,
): Required<Pick<LocalRuntimeOptions, 'port' | 'dataDir' | 'allowLoopbackIssuers' | 'exchangeRateLimit' | 'publicCatalog' | 'corsAllowedOrigins'>> &
  Pick<LocalRuntimeOptions, 'inferenceUpstreams'> {
  return {
    ...(env.MODELGATE_INFERENCE_UPSTREAMS ? { inferenceUpstreams: readSetting(env, 'MODELGATE_INFERENCE_UPSTREAMS', SETTINGS.inferenceUpstreams) } : {}),
    port: parseInteger(env, 'PORT', 8787, 0, 65535, 'a port number'),
    dataDir: localDataDir(env),
    allowLoopbackIssuers: env[ALLOW_LOOPBACK_ISSUERS_ENV] !== '0',
    exchangeRateLimit: readSetting(env, 'MODELGATE_EXCHANGE_LIMIT', SETTINGS.exchangeRateLimit),
    publicCatalog: readSetting(env, 'MODELGATE_PUBLIC_CATALOG', SETTINGS.publicCatalog),
    corsAllowedOrigins: readSetting(env, 'MODELGATE_CORS_ALLOWED_ORIGINS', SETTINGS.corsAllowedOrigins),
  };
}

/**
 * The data folder every command uses (`npm start`, `npm run demo`, `npm run ops`):
 * `MODELGATE_DATA_DIR`, `.local` when unset.
 */
export function localDataDir(env: NodeJS.ProcessEnv): string {
  return env.MODELGATE_DATA_DIR || '.local';
}

function parseInteger(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number, what: string): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) throw new Error(`${name} must be ${what}, got "${raw}"`);
  return value;
}

/** A setting of the table under a variable of its own, checked by its row. */
function readSetting<T>(env: NodeJS.ProcessEnv, name: string, row: { default: T; kind: { read(raw: unknown): T } }): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return row.default;
  try {
    return row.kind.read(raw);
  } catch (error) {
    if (error instanceof SettingProblem) throw new Error(`${name} ${error.message}`);
    throw error;
  }
}
