import { TABLE_SCHEMAS, type TableId } from './aws/table-schemas';
import { SETTINGS, SettingProblem, type EnvironmentSettingName, type SettingRow, type Settings } from './settings';

export { DEVELOPMENT_PROVIDER, LOG_LEVELS, type LogLevel } from './settings';

/** Values the stack wires into a function, beside the settings: not chosen by whoever deploys. */
export interface WiredValues {
  /** Folder of the settings pages' built assets, inside the function package (`PAGE_ASSETS_DIR`). */
  readonly pageAssetsDir: string;
  /** The Secrets Manager secret with the inference providers' keys (`PROVIDER_CREDENTIALS_SECRET_ARN`). */
  readonly providerCredentialsSecretArn: string;
}

const WIRED_ENV: Readonly<Record<keyof WiredValues, string>> = {
  pageAssetsDir: 'PAGE_ASSETS_DIR',
  providerCredentialsSecretArn: 'PROVIDER_CREDENTIALS_SECRET_ARN',
};

/** What a function may read beside its tables: settings of the table (lambdas/settings.ts), under their names, and wired values. */
export type FunctionValues = Pick<Settings, EnvironmentSettingName> & WiredValues;
/** The name of a setting or wired value a function may declare it reads. */
export type FunctionValueName = keyof FunctionValues;

/**
 * What one function reads: its tables, and the settings and wired values it cannot start
 * without. Every function also reads `stageName` and `logLevel`.
 */
export interface FunctionRequirements<T extends TableId = TableId, S extends FunctionValueName = FunctionValueName> {
  readonly tables: readonly T[];
  readonly settings?: readonly S[];
}

/**
 * Service configuration, parsed once per cold start from the environment into a frozen
 * object, each setting under its name in the table (`apiBaseUrl` from `API_BASE_URL`...). A
 * missing or malformed value fails the cold start with a message naming its variable; the
 * stack sets every one a function declares, so no default hides a value it forgot.
 * `tables` holds exactly the tables the function declared, so code cannot reach another.
 */
export type ServiceConfig<T extends TableId = never, S extends FunctionValueName = never> = Readonly<
  {
    tables: Readonly<Record<T, string>>;
    /**
     * Accept issuer and JWKS URLs on loopback hosts (127.0.0.0/8, ::1, localhost), so a
     * development identity provider works against the local runtime. Never on a deployed stage.
     * @default false
     */
    allowLoopbackIssuers: boolean;
  } & Pick<FunctionValues, S | 'stageName' | 'logLevel'>
>;

/** Set by the local runtime only (`MODELGATE_ALLOW_LOOPBACK_ISSUERS=0` turns it off there). */
export const ALLOW_LOOPBACK_ISSUERS_ENV = 'MODELGATE_ALLOW_LOOPBACK_ISSUERS';

/** The stage name of the local runtime, the one stage loopback issuers may be allowed on. */
export const LOCAL_STAGE = 'local';

/** A configuration value that is missing or malformed: it fails the cold start, naming its variable. */
export class ConfigError extends Error {}

/**
 * Reads one function's configuration from its environment, as its requirements declare.
 * @example loadConfig(process.env, { tables: ['keys'], settings: ['apiBaseUrl'] })
 */
export function loadConfig<T extends TableId, S extends FunctionValueName = never>(
  env: Readonly<Record<string, string | undefined>>,
  requirements: FunctionRequirements<T, S>,
): ServiceConfig<T, S> {
  const tables: Partial<Record<TableId, string>> = {};
  for (const id of requirements.tables) {
    const name = env[TABLE_SCHEMAS[id].envVar];
    if (!name) throw new ConfigError(`${TABLE_SCHEMAS[id].envVar} is not set`);
    tables[id] = name;
  }
  const names: readonly FunctionValueName[] = requirements.settings ?? [];
  const settings = settingsFromEnvironment(env, ['stageName', 'logLevel', ...names.filter(isSetting)]);
  const wired = Object.fromEntries(names.filter((name) => !isSetting(name)).map((name) => [name, required(env, WIRED_ENV[name as keyof WiredValues])]));
  const allowLoopbackIssuers = parseFlag(env, ALLOW_LOOPBACK_ISSUERS_ENV);
  if (allowLoopbackIssuers && settings.stageName !== LOCAL_STAGE) {
    throw new ConfigError(`${ALLOW_LOOPBACK_ISSUERS_ENV} is for the local runtime only, not stage "${settings.stageName}"`);
  }
  return Object.freeze({ tables: Object.freeze(tables), allowLoopbackIssuers, ...settings, ...wired }) as unknown as ServiceConfig<T, S>;
}

/**
 * The settings `names`, each read from its environment variable through its row of the table:
 * the range the stack checked at synth, so a value the stack passed is taken, and a missing or
 * malformed one fails naming the variable. The local runtime reads its environment record with it.
 */
export function settingsFromEnvironment<N extends EnvironmentSettingName>(env: Readonly<Record<string, string | undefined>>, names: readonly N[]): Pick<Settings, N> {
  const settings: Partial<Record<N, unknown>> = {};
  for (const name of names) {
    const row = SETTINGS[name] as SettingRow<unknown> & { env: string };
    try {
      settings[name] = row.kind.read(required(env, row.env));
    } catch (error) {
      if (error instanceof SettingProblem) throw new ConfigError(`${row.env} ${error.message}`);
      throw error;
    }
  }
  return settings as Pick<Settings, N>;
}

const isSetting = (name: FunctionValueName): name is EnvironmentSettingName => !Object.hasOwn(WIRED_ENV, name);

/** The environment variable a function reads a setting or wired value from. */
export function environmentVariableOf(name: FunctionValueName): string {
  return isSetting(name) ? (SETTINGS[name] as { env: string }).env : WIRED_ENV[name];
}

function required(env: Readonly<Record<string, string | undefined>>, name: string): string {
  const value = env[name];
  if (value === undefined || value === '') throw new ConfigError(`${name} is not set`);
  return value;
}

function parseFlag(env: Readonly<Record<string, string | undefined>>, name: string): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '' || raw === '0' || raw === 'false') return false;
  if (raw === '1' || raw === 'true') return true;
  throw new ConfigError(`${name} must be 1 or 0, got "${raw}"`);
}
