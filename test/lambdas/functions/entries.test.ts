import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TABLE_SCHEMAS } from '../../../lambdas/aws/table-schemas';
import { writeSettingsPage } from '../../../web/build';
import { FUNCTION_REQUIREMENTS } from '../../support/function-requirements';

const SETTING_VALUES: Record<string, [string, string]> = {
  signingKeyArn: ['SIGNING_KEY_ARN', 'arn:aws:kms:eu-west-1:111122223333:key/00000000-0000-0000-0000-000000000000'],
  inference: ['INFERENCE_UPSTREAMS', '{}'],
  // Filled with the built page before the tests run, as the bundling step fills the package.
  pageAssetsDir: ['PAGE_ASSETS_DIR', mkdtempSync(join(tmpdir(), 'modelgate-page-'))],
  apiBaseUrl: ['API_BASE_URL', 'https://api.example.com/api/v1'],
};

beforeAll(() => writeSettingsPage(SETTING_VALUES.pageAssetsDir![1]));
afterAll(() => rmSync(SETTING_VALUES.pageAssetsDir![1], { recursive: true, force: true }));

/** The environment a function's entry needs, all of it. */
function fullEnvironment(requirements: (typeof FUNCTION_REQUIREMENTS)[keyof typeof FUNCTION_REQUIREMENTS]['requirements']) {
  const env: Record<string, string> = { AWS_REGION: 'eu-west-1', STAGE: 'v1', LOG_LEVEL: 'ERROR' };
  for (const table of requirements.tables) env[TABLE_SCHEMAS[table].envVar] = `${table}-table`;
  for (const setting of ('settings' in requirements ? requirements.settings : []) as string[]) {
    const [name, value] = SETTING_VALUES[setting]!;
    env[name] = value;
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
      const required = Object.keys(env).filter((name) => !['AWS_REGION', 'STAGE', 'LOG_LEVEL'].includes(name));
      expect(required.length).toBeGreaterThan(0);
      for (const name of required) {
        const { [name]: _missing, ...rest } = env;
        expect(() => coldStart(entry, rest)).toThrow(`${name} is not set`);
      }
    });
  });
});
