import { ConfigError, loadConfig, settingsFromEnvironment } from '../../lambdas/config';

/** What every function's environment holds beside its own: the stage and the log level (lib/constructs/service-function.ts). */
const COMMON = { STAGE: 'v1', LOG_LEVEL: 'INFO' };

describe('loadConfig', () => {
  it('reads the tables and the settings a function declares, each under its name of the table, into a frozen object', () => {
    const config = loadConfig(
      { ...COMMON, KEYS_TABLE: 'keys-t', REGIONAL_HOSTNAMES: '{"eu":"EU.api.example.com."}', CATALOG_CACHE_SECONDS: '30', API_BASE_URL: 'https://api.example.com/api/v1' },
      { tables: ['keys'], settings: ['regionalHostnames', 'catalogCacheSeconds', 'apiBaseUrl'] },
    );
    expect(config).toEqual({
      tables: { keys: 'keys-t' },
      regionalHostnames: { eu: 'eu.api.example.com' },
      catalogCacheSeconds: 30,
      apiBaseUrl: 'https://api.example.com/api/v1',
      stageName: 'v1',
      logLevel: 'INFO',
      allowLoopbackIssuers: false,
    });
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.tables)).toBe(true);
    expect(Object.isFrozen(config.regionalHostnames)).toBe(true);
  });

  it('reads whether the catalog is public and which origins may call the API, as the functions that declare them do', () => {
    const config = loadConfig(
      { ...COMMON, PUBLIC_CATALOG: '1', CORS_ALLOWED_ORIGINS: 'https://app.example.com, http://localhost:3000' },
      { tables: [], settings: ['publicCatalog', 'corsAllowedOrigins'] },
    );
    expect(config).toMatchObject({ publicCatalog: true, corsAllowedOrigins: ['https://app.example.com', 'http://localhost:3000'] });
    expect(Object.isFrozen(config.corsAllowedOrigins)).toBe(true);
    expect(loadConfig({ ...COMMON, PUBLIC_CATALOG: '0', CORS_ALLOWED_ORIGINS: '*' }, { tables: [], settings: ['publicCatalog', 'corsAllowedOrigins'] })).toMatchObject({
      publicCatalog: false,
      corsAllowedOrigins: ['*'],
    });
  });

  it.each([
    [{ PUBLIC_CATALOG: '0' }, 'CORS_ALLOWED_ORIGINS is not set'],
    [{ CORS_ALLOWED_ORIGINS: '*' }, 'PUBLIC_CATALOG is not set'],
    [{ PUBLIC_CATALOG: 'yes', CORS_ALLOWED_ORIGINS: '*' }, 'PUBLIC_CATALOG must be true or false (1 or 0), got "yes"'],
    [{ PUBLIC_CATALOG: '0', CORS_ALLOWED_ORIGINS: '*,https://app.example.com' }, 'CORS_ALLOWED_ORIGINS must be "*" alone or a list of origins, not both'],
    [
      { PUBLIC_CATALOG: '0', CORS_ALLOWED_ORIGINS: 'https://app.example.com/' },
      'CORS_ALLOWED_ORIGINS must be "*" or origins such as https://app.example.com (scheme, host and port only), got "https://app.example.com/"',
    ],
    [
      { PUBLIC_CATALOG: '0', CORS_ALLOWED_ORIGINS: 'app.example.com' },
      'CORS_ALLOWED_ORIGINS must be "*" or origins such as https://app.example.com (scheme, host and port only), got "app.example.com"',
    ],
  ])('fails fast on the public catalog and CORS settings: %p', (env, message) => {
    expect(() => loadConfig({ ...COMMON, ...env }, { tables: [], settings: ['publicCatalog', 'corsAllowedOrigins'] })).toThrow(new ConfigError(message));
  });

  it('holds only the tables and settings the function declared, even when others are set', () => {
    const config = loadConfig({ ...COMMON, KEYS_TABLE: 'k', MODELS_TABLE: 'm', POLICIES_TABLE: 'p', EXCHANGE_RATE_LIMIT: '5' }, { tables: ['keys', 'models'] });
    expect(config.tables).toEqual({ keys: 'k', models: 'm' });
    expect(config).not.toHaveProperty('exchangeRateLimit');
  });

  it('reads the values the stack wires in, and the log level in any case', () => {
    const config = loadConfig(
      { ...COMMON, KEYS_TABLE: 'k', PROVIDER_CREDENTIALS_SECRET_ARN: 'arn:secret', PAGE_ASSETS_DIR: 'settings-page', LOG_LEVEL: 'debug' },
      { tables: ['keys'], settings: ['providerCredentialsSecretArn', 'pageAssetsDir'] },
    );
    expect(config).toMatchObject({ providerCredentialsSecretArn: 'arn:secret', pageAssetsDir: 'settings-page', logLevel: 'DEBUG' });
  });

  it('reads the inference upstreams without a prototype, trailing slashes removed', () => {
    const { inferenceUpstreams, upstreamTimeoutSeconds } = loadConfig(
      { ...COMMON, INFERENCE_UPSTREAMS: '{"*":"https://llm.example.com/api/v1/","local":"development-echo"}', UPSTREAM_TIMEOUT_SECONDS: '30' },
      { tables: [], settings: ['inferenceUpstreams', 'upstreamTimeoutSeconds'] },
    );
    expect({ ...inferenceUpstreams }).toEqual({ '*': 'https://llm.example.com/api/v1', local: 'development-echo' });
    expect(Object.getPrototypeOf(inferenceUpstreams)).toBeNull();
    expect(upstreamTimeoutSeconds).toBe(30);
  });

  it.each([
    ['http://api.example.com/api/v1', 'API_BASE_URL must be an https:// URL (http:// on a loopback host) without query, fragment or trailing slash, got "http://api.example.com/api/v1"'],
    ['https://api.example.com/api/v1/', 'API_BASE_URL must be an https:// URL (http:// on a loopback host) without query, fragment or trailing slash, got "https://api.example.com/api/v1/"'],
    ['api.example.com', 'API_BASE_URL must be an https:// URL (http:// on a loopback host) without query, fragment or trailing slash, got "api.example.com"'],
  ])('refuses API_BASE_URL %p', (url, message) => {
    expect(() => loadConfig({ ...COMMON, API_BASE_URL: url }, { tables: [], settings: ['apiBaseUrl'] })).toThrow(new ConfigError(message));
  });

  it('accepts an https API base URL, and plain http on loopback only', () => {
    for (const url of ['https://api.example.com/api/v1', 'http://127.0.0.1:8787/api/v1']) {
      expect(loadConfig({ ...COMMON, API_BASE_URL: url }, { tables: [], settings: ['apiBaseUrl'] }).apiBaseUrl).toBe(url);
    }
  });

  it.each([
    [{ ...COMMON }, 'KEYS_TABLE is not set'],
    [{ KEYS_TABLE: 'k', LOG_LEVEL: 'INFO' }, 'STAGE is not set'],
    [{ KEYS_TABLE: 'k', STAGE: 'v1' }, 'LOG_LEVEL is not set'],
    [{ ...COMMON, KEYS_TABLE: 'k', LOG_LEVEL: 'verbose' }, 'LOG_LEVEL must be one of DEBUG, INFO, WARN, ERROR, got "verbose"'],
    [{ ...COMMON, KEYS_TABLE: 'k', STAGE: 'v 1' }, 'STAGE must be 1 to 128 letters, digits, "-" or "_", got "v 1"'],
    [{ ...COMMON, KEYS_TABLE: 'k', MODELGATE_ALLOW_LOOPBACK_ISSUERS: 'yes' }, 'MODELGATE_ALLOW_LOOPBACK_ISSUERS must be 1 or 0, got "yes"'],
    [{ ...COMMON, KEYS_TABLE: 'k', MODELGATE_ALLOW_LOOPBACK_ISSUERS: '1', STAGE: 'prod' }, 'MODELGATE_ALLOW_LOOPBACK_ISSUERS is for the local runtime only, not stage "prod"'],
    // Without STAGE a process is no local runtime: the table's default stage is a deployed one.
    [{ LOG_LEVEL: 'INFO', KEYS_TABLE: 'k', MODELGATE_ALLOW_LOOPBACK_ISSUERS: '1' }, 'STAGE is not set'],
  ])('fails fast on %p', (env, message) => {
    expect(() => loadConfig(env, { tables: ['keys'] })).toThrow(new ConfigError(message));
  });

  it.each([
    [{ ...COMMON }, 'CATALOG_CACHE_SECONDS is not set'],
    [{ ...COMMON, CATALOG_CACHE_SECONDS: '' }, 'CATALOG_CACHE_SECONDS is not set'],
    [{ ...COMMON, CATALOG_CACHE_SECONDS: 'soon' }, 'CATALOG_CACHE_SECONDS must be an integer from 0 to 3600, got "soon"'],
    [{ ...COMMON, CATALOG_CACHE_SECONDS: '30', REGIONAL_HOSTNAMES: '["eu"]' }, 'REGIONAL_HOSTNAMES must be an object of region to hostname'],
    [{ ...COMMON, CATALOG_CACHE_SECONDS: '30', REGIONAL_HOSTNAMES: '{"eu":""}' }, 'REGIONAL_HOSTNAMES "eu" must map to a hostname, got ""'],
    [{ ...COMMON, CATALOG_CACHE_SECONDS: '30', REGIONAL_HOSTNAMES: '{"EU":"eu.example.com"}' }, 'REGIONAL_HOSTNAMES region "EU" must be lowercase letters, digits or "-"'],
  ])('fails fast on a declared setting missing or out of its range: %p', (env, message) => {
    expect(() => loadConfig(env, { tables: [], settings: ['catalogCacheSeconds', 'regionalHostnames'] })).toThrow(new ConfigError(message));
  });

  it.each([
    [{ ...COMMON, UPSTREAM_TIMEOUT_SECONDS: '60' }, 'INFERENCE_UPSTREAMS is not set'],
    [{ ...COMMON, UPSTREAM_TIMEOUT_SECONDS: '60', INFERENCE_UPSTREAMS: '{"*":"ftp://x"}' }, 'INFERENCE_UPSTREAMS "*" must map to an https:// base URL (http:// on a loopback host), "development-echo" or an object with "api", got "ftp://x"'],
    [{ ...COMMON, UPSTREAM_TIMEOUT_SECONDS: '60', INFERENCE_UPSTREAMS: '{"*":"http://llm.example.com/v1"}' }, 'INFERENCE_UPSTREAMS "*" must map to an https:// base URL (http:// on a loopback host), "development-echo" or an object with "api", got "http://llm.example.com/v1"'],
    [{ ...COMMON, UPSTREAM_TIMEOUT_SECONDS: '60', INFERENCE_UPSTREAMS: '"https://x"' }, 'INFERENCE_UPSTREAMS must be an object of provider to upstream'],
    [{ ...COMMON, UPSTREAM_TIMEOUT_SECONDS: '60', INFERENCE_UPSTREAMS: '{"anthropic":{"api":"claude"}}' }, 'INFERENCE_UPSTREAMS "anthropic" "api" must be one of openai, anthropic, bedrock, got "claude"'],
    [{ ...COMMON, UPSTREAM_TIMEOUT_SECONDS: '60', INFERENCE_UPSTREAMS: '{"openai":{"api":"openai","baseUrl":"http://api.example.com/v1"}}' }, 'INFERENCE_UPSTREAMS "openai" "baseUrl" must be an https:// URL (http:// on a loopback host), got "http://api.example.com/v1"'],
    [{ ...COMMON, UPSTREAM_TIMEOUT_SECONDS: '60', INFERENCE_UPSTREAMS: '{"amazon-bedrock":{"api":"bedrock","models":{"anthropic/claude-sonnet-4":7}}}' }, 'INFERENCE_UPSTREAMS "amazon-bedrock" "models"."anthropic/claude-sonnet-4" must be a provider model id, got 7'],
    [{ ...COMMON, UPSTREAM_TIMEOUT_SECONDS: '60', INFERENCE_UPSTREAMS: '{"amazon-bedrock":{"api":"bedrock","regoin":"us-west-2"}}' }, 'INFERENCE_UPSTREAMS "amazon-bedrock" has an unknown member "regoin" (known: api, baseUrl, region, models)'],
    [{ ...COMMON, UPSTREAM_TIMEOUT_SECONDS: '60', INFERENCE_UPSTREAMS: '{"openai":{"api":"openai","region":"us-west-2"}}' }, 'INFERENCE_UPSTREAMS "openai" "region" is for the bedrock api only'],
    [{ ...COMMON, INFERENCE_UPSTREAMS: '{}', UPSTREAM_TIMEOUT_SECONDS: '301' }, 'UPSTREAM_TIMEOUT_SECONDS must be an integer from 1 to 300, got "301"'],
  ])('fails fast on the inference settings: %p', (env, message) => {
    expect(() => loadConfig(env, { tables: [], settings: ['inferenceUpstreams', 'upstreamTimeoutSeconds'] })).toThrow(new ConfigError(message));
  });

  it('fails fast without a wired value the function declares', () => {
    expect(() => loadConfig({ ...COMMON }, { tables: [], settings: ['pageAssetsDir'] })).toThrow(new ConfigError('PAGE_ASSETS_DIR is not set'));
  });

  it('allows loopback issuers on the local stage only when asked', () => {
    const keys = { tables: ['keys'] } as const;
    const local = { ...COMMON, KEYS_TABLE: 'k', STAGE: 'local' };
    expect(loadConfig({ ...local, MODELGATE_ALLOW_LOOPBACK_ISSUERS: '1' }, keys).allowLoopbackIssuers).toBe(true);
    expect(loadConfig({ ...local, MODELGATE_ALLOW_LOOPBACK_ISSUERS: '0' }, keys).allowLoopbackIssuers).toBe(false);
    expect(loadConfig({ ...COMMON, KEYS_TABLE: 'k', STAGE: 'prod' }, keys).allowLoopbackIssuers).toBe(false);
  });
});

describe('settingsFromEnvironment', () => {
  it('reads exactly the settings asked for, from their variables', () => {
    expect(settingsFromEnvironment({ EXCHANGE_RATE_LIMIT: '30', EXCHANGE_RATE_WINDOW_SECONDS: '60', LOG_LEVEL: 'warn' }, ['exchangeRateLimit', 'exchangeRateWindowSeconds'])).toEqual({
      exchangeRateLimit: 30,
      exchangeRateWindowSeconds: 60,
    });
  });
});
