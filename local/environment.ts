import { ALLOW_LOOPBACK_ISSUERS_ENV } from '../lambdas/config';
import { ANY_ORIGIN, parseCorsOrigins } from '../lambdas/http/cors';
import type { LocalRuntimeOptions } from './runtime';

/**
 * `npm start`'s environment variables, read once here, so the runtime itself never reads
 * `process.env`:
 * - `PORT` (default 8787) and `MODELGATE_DATA_DIR` (default `.local`);
 * - `MODELGATE_ALLOW_LOOPBACK_ISSUERS=0` judges issuer hosts as a deployed stack does;
 * - `MODELGATE_EXCHANGE_LIMIT`: token exchanges per address per minute (default 60);
 * - `MODELGATE_PUBLIC_CATALOG=1`: the public catalog answers callers without a key, as
 *   `modelgate:publicCatalog` does in AWS;
 * - `MODELGATE_CORS_ALLOWED_ORIGINS`: `*` (the default) or a comma-separated list of origins,
 *   as `modelgate:corsAllowedOrigins`.
 * A malformed value fails the start with a message naming it.
 */
export function localRuntimeOptionsFromEnvironment(
  env: NodeJS.ProcessEnv,
): Required<Pick<LocalRuntimeOptions, 'port' | 'dataDir' | 'allowLoopbackIssuers' | 'exchangeLimit' | 'publicCatalog' | 'corsAllowedOrigins'>> {
  return {
    port: parseInteger(env, 'PORT', 8787, 0, 65535, 'a port number'),
    dataDir: localDataDir(env),
    allowLoopbackIssuers: env[ALLOW_LOOPBACK_ISSUERS_ENV] !== '0',
    exchangeLimit: parseInteger(env, 'MODELGATE_EXCHANGE_LIMIT', 60, 1, 1_000_000, 'an integer from 1 to 1000000'),
    publicCatalog: parseInteger(env, 'MODELGATE_PUBLIC_CATALOG', 0, 0, 1, '1 or 0') === 1,
    corsAllowedOrigins: parseCorsOrigins((env.MODELGATE_CORS_ALLOWED_ORIGINS || ANY_ORIGIN).split(',').map((origin) => origin.trim()), (message) => {
      throw new Error(`MODELGATE_CORS_ALLOWED_ORIGINS ${message}`);
    }),
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
