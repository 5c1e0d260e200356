import { ConfigError, settingsFromEnvironment } from '../../lambdas/config';
import { DEFAULT_SETTINGS, SETTINGS, settingsEnvironment, type EnvironmentSettingName, type SettingName } from '../../lambdas/settings';
import { SettingsError, validateSettings } from '../../lib/settings';

const ENVIRONMENT_SETTINGS = (Object.keys(SETTINGS) as SettingName[]).filter((name): name is EnvironmentSettingName => 'env' in SETTINGS[name]);

/**
 * Values on both sides of each range, and of each form: what the stack takes at synth (context or
 * props) a function takes at cold start, and what one refuses the other refuses.
 */
const SAMPLES: Record<EnvironmentSettingName, readonly unknown[]> = {
  stageName: ['v1', 'prod_2', '', 'v 1', 'x'.repeat(129)],
  regionalHostnames: [{ eu: 'eu.api.example.com' }, { eu: 'EU.Example.com.' }, { EU: 'eu.example.com' }, { eu: 'https://eu.example.com' }, { eu: '' }],
  accessTokenMaxLifetimeSeconds: [60, 900, 59, 901, 600.5],
  catalogCacheSeconds: [0, 3600, -1, 3601],
  catalogReloadSpreadSeconds: [0, 3600, -1, 3601],
  inferenceUpstreams: [
    { '*': 'https://llm.example.com/v1/' },
    { 'novita/fp8': 'development-echo' },
    { '*': 'http://127.0.0.1:9000/v1' },
    { '*': 'http://llm.example.com/v1' },
    { '*': 'ftp://llm.example.com' },
    { 'a b': 'https://llm.example.com' },
    { '*': 'https://llm.example.com/v1?key=1' },
  ],
  upstreamTimeoutSeconds: [1, 300, 0, 301, 900],
  responseRetentionDays: [1, 365, 0, 366, 1.5],
  logLevel: ['INFO', 'debug', 'verbose'],
  apiBaseUrl: ['https://api.example.com/api/v1', 'http://127.0.0.1:8787/api/v1', 'http://api.example.com/api/v1', 'https://api.example.com/api/v1/', 'https://api.example.com/api/v1?x=1'],
  exchangeRateLimit: [1, 1_000_000, 0, 1_000_001],
  exchangeRateWindowSeconds: [1, 3600, 0, 3601],
  publicCatalog: [true, false, 'true', 'false', 'yes', 'TRUE'],
  corsAllowedOrigins: [
    ['*'],
    '*',
    ['https://app.example.com', 'http://localhost:3000'],
    'https://a.example.com, https://b.example.com:8443',
    ['*', 'https://a.example.com'],
    ['https://a.example.com/'],
    'app.example.com',
    [],
  ],
};

/** What the stack makes of a value: the setting in its one form, or the refusal. */
function atSynth(name: EnvironmentSettingName, value: unknown): unknown {
  try {
    return validateSettings({ [name]: value })[name];
  } catch (error) {
    if (error instanceof SettingsError) return 'refused';
    throw error;
  }
}

/** What a function makes of the same value, as the stack writes it into its environment. */
function atColdStart(name: EnvironmentSettingName, value: unknown): unknown {
  const row = SETTINGS[name] as { env: string; kind: { write(value: unknown): string } };
  const text = typeof value === 'string' ? value : typeof value === 'number' ? String(value) : JSON.stringify(value);
  try {
    return settingsFromEnvironment({ [row.env]: text }, [name])[name];
  } catch (error) {
    if (error instanceof ConfigError) return 'refused';
    throw error;
  }
}

describe('the settings table', () => {
  it.each(ENVIRONMENT_SETTINGS)('gives %s one range and one form at synth and at cold start', (name) => {
    const results = SAMPLES[name].map((value) => [value, atSynth(name, value), atColdStart(name, value)]);
    // An empty string is a setting left out at synth, and a missing variable at cold start.
    const compared = results.filter(([value]) => value !== '');
    expect(compared.map(([value, synth]) => [value, synth, synth])).toEqual(compared);
    expect(compared.some(([, synth]) => synth === 'refused')).toBe(true);
    expect(compared.some(([, synth]) => synth !== 'refused')).toBe(true);
  });

  it.each(ENVIRONMENT_SETTINGS.filter((name) => name !== 'apiBaseUrl'))('reads %s back from the variable the stack writes for its default', (name) => {
    expect(settingsFromEnvironment(settingsEnvironment(DEFAULT_SETTINGS, [name]), [name])).toEqual({ [name]: DEFAULT_SETTINGS[name] });
  });

  it('has a default within its range for every setting', () => {
    expect(validateSettings(DEFAULT_SETTINGS)).toEqual(DEFAULT_SETTINGS);
  });

  it('gives each setting its own variable', () => {
    const variables = ENVIRONMENT_SETTINGS.map((name) => (SETTINGS[name] as { env: string }).env);
    expect(new Set(variables).size).toBe(variables.length);
  });

  it('refuses at cold start, naming the variable, what it refuses at synth naming the context key', () => {
    expect(() => validateSettings({ upstreamTimeoutSeconds: 301 })).toThrow(new SettingsError('modelgate:upstreamTimeoutSeconds must be an integer from 1 to 300, got 301'));
    expect(() => settingsFromEnvironment({ UPSTREAM_TIMEOUT_SECONDS: '301' }, ['upstreamTimeoutSeconds'])).toThrow(
      new ConfigError('UPSTREAM_TIMEOUT_SECONDS must be an integer from 1 to 300, got "301"'),
    );
  });
});
