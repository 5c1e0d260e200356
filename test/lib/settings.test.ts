import { App } from 'aws-cdk-lib';
import { DEFAULT_SETTINGS, readSettingsFromContext, SettingsError, validateSettings, type ModelgateSettings } from '../../lib/settings';
import { cdkJsonContext } from './template-helpers';

const read = (context: Record<string, unknown>): ModelgateSettings => readSettingsFromContext(new App({ context }).node);

describe('readSettingsFromContext', () => {
  it('reads every modelgate: key of cdk.json, the settings it leaves out at their defaults', () => {
    expect(read(cdkJsonContext())).toEqual({
      ...DEFAULT_SETTINGS,
      instance: 'Modelgate',
      stageName: 'v1',
      wafTokenRateLimit: 100,
      wafGeneralRateLimit: 2000,
      regionalHostnames: {},
      accessTokenMaxLifetimeSeconds: 900,
      catalogCacheSeconds: 30,
      inferenceUpstreams: {},
      upstreamTimeoutSeconds: 60,
      logLevel: 'INFO',
      apiBaseUrl: '',
      exchangeRateLimit: 60,
      exchangeRateWindowSeconds: 60,
      publicCatalog: false,
      corsAllowedOrigins: ['*'],
    });
  });

  it('falls back to the defaults when the context is empty, and takes an empty string as left out', () => {
    expect(read({})).toEqual(DEFAULT_SETTINGS);
    expect(read({ 'modelgate:instance': '', 'modelgate:catalogCacheSeconds': '' })).toEqual(DEFAULT_SETTINGS);
  });

  it('accepts numbers and maps as strings, as `cdk -c key=value` passes them, and brings them to one form', () => {
    const settings = read({
      'modelgate:wafTokenRateLimit': '50',
      'modelgate:regionalHostnames': '{"us":"US.api.example.com."}',
      'modelgate:logLevel': 'debug',
    });
    expect(settings).toMatchObject({ wafTokenRateLimit: 50, regionalHostnames: { us: 'us.api.example.com' }, logLevel: 'DEBUG' });
  });

  it('reads the inference upstreams, as an object or as `-c` JSON', () => {
    const upstreams = { '*': 'https://llm.example.com/api/v1', 'novita/fp8': 'development-echo' };
    expect(read({ 'modelgate:inferenceUpstreams': upstreams }).inferenceUpstreams).toEqual(upstreams);
    expect(read({ 'modelgate:inferenceUpstreams': JSON.stringify(upstreams), 'modelgate:upstreamTimeoutSeconds': '20' })).toMatchObject({
      inferenceUpstreams: upstreams,
      upstreamTimeoutSeconds: 20,
    });
    expect(() => read({ 'modelgate:inferenceUpstreams': '{' })).toThrow(
      new SettingsError('modelgate:inferenceUpstreams must be a JSON object of provider to upstream'),
    );
  });

  it('reads the example upstreams cdk.json shows into their one form: provider APIs with their model ids', () => {
    const example = cdkJsonContext()['example:modelgate:inferenceUpstreams'];
    expect(read({ 'modelgate:inferenceUpstreams': example }).inferenceUpstreams).toEqual({
      openai: { api: 'openai', models: {} },
      anthropic: { api: 'anthropic', models: {} },
      'amazon-bedrock': { api: 'bedrock', models: { 'anthropic/claude-sonnet-4': 'us.anthropic.claude-sonnet-4-20250514-v1:0' } },
      '*': 'development-echo',
    });
    const given = { api: 'anthropic', baseUrl: 'https://proxy.example.com/anthropic/v1/', models: { 'anthropic/claude-sonnet-4': 'claude-sonnet-4-20250514' } };
    expect(read({ 'modelgate:inferenceUpstreams': { anthropic: given } }).inferenceUpstreams.anthropic).toEqual({ ...given, baseUrl: 'https://proxy.example.com/anthropic/v1' });
  });

  it('reads the public catalog switch and the CORS origins, as values or as `-c` strings', () => {
    expect(read({ 'modelgate:publicCatalog': true, 'modelgate:corsAllowedOrigins': ['https://app.example.com'] })).toMatchObject({
      publicCatalog: true,
      corsAllowedOrigins: ['https://app.example.com'],
    });
    expect(read({ 'modelgate:publicCatalog': 'true', 'modelgate:corsAllowedOrigins': 'https://a.example.com, https://b.example.com:8443' })).toMatchObject({
      publicCatalog: true,
      corsAllowedOrigins: ['https://a.example.com', 'https://b.example.com:8443'],
    });
    expect(read({ 'modelgate:corsAllowedOrigins': '["https://a.example.com"]' }).corsAllowedOrigins).toEqual(['https://a.example.com']);
    expect(read({ 'modelgate:corsAllowedOrigins': '*' }).corsAllowedOrigins).toEqual(['*']);
  });

  it('returns a frozen object', () => {
    const settings = read({});
    expect(Object.isFrozen(settings)).toBe(true);
    expect(Object.isFrozen(settings.regionalHostnames)).toBe(true);
  });

  it.each([
    ['modelgate:wafTokenRateLimit', 'many', 'modelgate:wafTokenRateLimit must be an integer from 10 to 2000000000, got "many"'],
    ['modelgate:stageName', 1, 'modelgate:stageName must be 1 to 128 letters, digits, "-" or "_", got 1'],
    ['modelgate:regionalHostnames', '[1', 'modelgate:regionalHostnames must be a JSON object of region to hostname'],
    ['modelgate:regionalHostnames', ['eu'], 'modelgate:regionalHostnames must be an object of region to hostname'],
    ['modelgate:alarmTopicArn', 'arn:aws:sqs:eu-west-1:111122223333:q', 'modelgate:alarmTopicArn must be the ARN of an SNS topic, got "arn:aws:sqs:eu-west-1:111122223333:q"'],
    ['modelgate:publicCatalog', 'yes', 'modelgate:publicCatalog must be true or false (1 or 0), got "yes"'],
    ['modelgate:corsAllowedOrigins', ['*', 'https://a.example.com'], 'modelgate:corsAllowedOrigins must be "*" alone or a list of origins, not both'],
    ['modelgate:corsAllowedOrigins', 'https://a.example.com/app', 'modelgate:corsAllowedOrigins must be "*" or origins such as https://app.example.com (scheme, host and port only), got "https://a.example.com/app"'],
    ['modelgate:corsAllowedOrigins', [], 'modelgate:corsAllowedOrigins must be "*" or a non-empty list of origins'],
  ])('rejects %s = %j naming the key', (key, value, message) => {
    expect(() => read({ [key]: value })).toThrow(new SettingsError(message));
  });
});

describe('inferenceReservedConcurrency', () => {
  it('is unset unless given: no function reserves concurrency by default', () => {
    expect(read({}).inferenceReservedConcurrency).toBeUndefined();
    expect(read({ 'modelgate:inferenceReservedConcurrency': 400 }).inferenceReservedConcurrency).toBe(400);
    expect(read({ 'modelgate:inferenceReservedConcurrency': '250' }).inferenceReservedConcurrency).toBe(250);
  });

  it.each([0, -1, 1.5, 100_001])('refuses %d, naming the key', (value) => {
    expect(() => read({ 'modelgate:inferenceReservedConcurrency': value })).toThrow(
      new SettingsError(`modelgate:inferenceReservedConcurrency must be an integer from 1 to 100000, got ${value}`),
    );
  });
});

describe('validateSettings', () => {
  it.each([
    [{ accessTokenMaxLifetimeSeconds: 901 }, 'modelgate:accessTokenMaxLifetimeSeconds must be an integer from 60 to 900, got 901'],
    [{ accessTokenMaxLifetimeSeconds: 59 }, 'modelgate:accessTokenMaxLifetimeSeconds must be an integer from 60 to 900, got 59'],
    [{ wafTokenRateLimit: 9 }, 'modelgate:wafTokenRateLimit must be an integer from 10 to 2000000000, got 9'],
    [{ wafGeneralRateLimit: 1.5 }, 'modelgate:wafGeneralRateLimit must be an integer from 10 to 2000000000, got 1.5'],
    [{ catalogCacheSeconds: -1 }, 'modelgate:catalogCacheSeconds must be an integer from 0 to 3600, got -1'],
    [
      { inferenceUpstreams: { '*': 'http://llm.example.com/v1' } },
      'modelgate:inferenceUpstreams "*" must map to an https:// base URL (http:// on a loopback host), "development-echo" or an object with "api", got "http://llm.example.com/v1"',
    ],
    [{ inferenceUpstreams: { 'a b': 'https://llm.example.com/v1' } }, 'modelgate:inferenceUpstreams "a b" is not a provider tag'],
    [{ upstreamTimeoutSeconds: 301 }, 'modelgate:upstreamTimeoutSeconds must be an integer from 1 to 300, got 301'],
    [{ logLevel: 'verbose' }, 'modelgate:logLevel must be one of DEBUG, INFO, WARN, ERROR, got "verbose"'],
    [{ stageName: 'v 1' }, 'modelgate:stageName must be 1 to 128 letters, digits, "-" or "_", got "v 1"'],
    [{ regionalHostnames: { EU: 'eu.example.com' } }, 'modelgate:regionalHostnames region "EU" must be lowercase letters, digits or "-"'],
    [{ regionalHostnames: { eu: 'https://eu.example.com' } }, 'modelgate:regionalHostnames "eu" must map to a hostname, got "https://eu.example.com"'],
    [{ apiBaseUrl: 'https://api.example.com/api/v1/' }, 'modelgate:apiBaseUrl must be an https:// URL (http:// on a loopback host) without query, fragment or trailing slash, got "https://api.example.com/api/v1/"'],
  ])('rejects %j', (override, message) => {
    expect(() => validateSettings({ ...DEFAULT_SETTINGS, ...(override as Partial<ModelgateSettings>) })).toThrow(new SettingsError(message));
  });

  it('accepts the bounds (docs/reference.md#limits: tokens live at most 900 s)', () => {
    expect(validateSettings({ ...DEFAULT_SETTINGS, accessTokenMaxLifetimeSeconds: 900, catalogCacheSeconds: 0 })).toEqual({
      ...DEFAULT_SETTINGS,
      accessTokenMaxLifetimeSeconds: 900,
      catalogCacheSeconds: 0,
    });
  });

  it('applies the default of every setting left out', () => {
    expect(validateSettings({ exchangeRateLimit: 30 })).toEqual({ ...DEFAULT_SETTINGS, exchangeRateLimit: 30 });
  });
});
