import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TABLE_SCHEMAS } from '../../../lambdas/aws/table-schemas';
import { environmentVariableOf, type FunctionValueName } from '../../../lambdas/config';
import { DEFAULT_SETTINGS, settingsEnvironment, type EnvironmentSettingName } from '../../../lambdas/settings';
import { writeSettingsPage } from '../../../web/build';
import { FUNCTION_REQUIREMENTS } from '../../support/function-requirements';

// Filled with the built page before the tests run, as the bundling step fills the package.
const PAGE_ASSETS_DIR = mkdtempSync(join(tmpdir(), 'modelgate-page-'));
/** The settings at their defaults (the stack resolves the API base URL), and the values the stack wires in. */
const SETTINGS_GIVEN = { ...DEFAULT_SETTINGS, apiBaseUrl: 'https://api.example.com/api/v1', logLevel: 'ERROR' as const };
const WIRED: Record<string, string> = {
  PAGE_ASSETS_DIR,
  PROVIDER_CREDENTIALS_SECRET_ARN: 'arn:aws:secretsmanager:eu-west-1:111122223333:secret:provider-credentials-AbCdEf',
};

beforeAll(() => writeSettingsPage(PAGE_ASSETS_DIR));
afterAll(() => rmSync(PAGE_ASSETS_DIR, { recursive: true, force: true }));

/** The environment a function's entry needs, all of it: the stack's stage and log level, its tables and what it declares. */
function fullEnvironment(requirements: (typeof FUNCTION_REQUIREMENTS)[keyof typeof FUNCTION_REQUIREMENTS]['requirements']) {
  const env: Record<string, string> = { AWS_REGION: 'eu-west-1', ...settingsEnvironment(SETTINGS_GIVEN, ['stageName', 'logLevel']) };
  for (const table of requirements.tables) env[TABLE_SCHEMAS[table].envVar] = `${table}-table`;
  for (const name of ('settings' in requirements ? requirements.settings : []) as FunctionValueName[]) {
    const variable = environmentVariableOf(name);
    env[variable] = WIRED[variable] ?? settingsEnvironment(SETTINGS_GIVEN, [name as EnvironmentSettingName])[variable]!;
  }
  return env;
}

/** Loads a Lambda entry module fresh, as a cold start does, with exactly `env`. */
function coldStart(entry: string, env: Record<string, string>): { handler?: unknown } {
  const saved = process.env;
  process.env = { PATH: saved.PATH, ...env };
  try {
    let loaded: { handler?: unknown } = {};
    jest.isolateModules(() => {
      loaded = require(`../../../lambdas/functions/${entry}/entry`);
    });
    return loaded;
  } finally {
    process.env = saved;
  }
}

describe('Lambda entries: each fails its cold start without exactly what it reads', () => {
  describe.each(Object.entries(FUNCTION_REQUIREMENTS))('%s', (_id, { entry, requirements }) => {
    it('starts with its tables and settings and exports a handler', () => {
      expect(typeof coldStart(entry, fullEnvironment(requirements)).handler).toBe('function');
    });

    it('fails naming each missing table or setting', () => {
      const env = fullEnvironment(requirements);
      const required = Object.keys(env).filter((name) => name !== 'AWS_REGION');
      expect(required.length).toBeGreaterThan(0);
      for (const name of required) {
        const { [name]: _missing, ...rest } = env;
        expect(() => coldStart(entry, rest)).toThrow(`${name} is not set`);
      }
    });
  });
});
