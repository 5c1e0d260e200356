import { ConfigError, loadConfig } from '../../lambdas/config';

describe('loadConfig', () => {
  it('reads table names, hostnames and limits, with defaults, into a frozen object', () => {
    const config = loadConfig({ KEYS_TABLE: 'keys-t', REGIONAL_HOSTNAMES: '{"eu":"EU.api.example.com."}' }, { tables: ['keys'] });
    expect(config).toEqual({
      tables: { keys: 'keys-t' },
      regionalHostnames: { eu: 'eu.api.example.com' },
      catalogCacheSeconds: 30,
      accessTokenMaxLifetimeSeconds: 900,
      exchangeRateLimit: 60,
      exchangeRateWindowSeconds: 60,
      logLevel: 'INFO',
      stage: 'local',
      allowLoopbackIssuers: false,
      publicCatalog: false,
      corsAllowedOrigins: ['*'],
    });
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.tables)).toBe(true);
  });

  it('reads whether the catalog is public and which origins may call the API', () => {
    const config = loadConfig({ PUBLIC_CATALOG: '1', CORS_ALLOWED_ORIGINS: 'https://app.example.com, http://localhost:3000' }, { tables: [] });
    expect(config).toMatchObject({ publicCatalog: true, corsAllowedOrigins: ['https://app.example.com', 'http://localhost:3000'] });
  });

  it.each([
    ['*,https://app.example.com', 'CORS_ALLOWED_ORIGINS must be "*" alone or a list of origins, not both'],
    ['https://app.example.com/', 'CORS_ALLOWED_ORIGINS must be "*" or origins such as https://app.example.com (scheme, host and port only), got "https://app.example.com/"'],
    ['app.example.com', 'CORS_ALLOWED_ORIGINS must be "*" or origins such as https://app.example.com (scheme, host and port only), got "app.example.com"'],
  ])('refuses CORS_ALLOWED_ORIGINS %p', (origins, message) => {
    expect(() => loadConfig({ CORS_ALLOWED_ORIGINS: origins }, { tables: [] })).toThrow(new ConfigError(message));
  });

  it('holds only the tables the function declared, even when others are set', () => {
    const config = loadConfig({ KEYS_TABLE: 'k', MODELS_TABLE: 'm', POLICIES_TABLE: 'p' }, { tables: ['keys', 'models'] });
    expect(config.tables).toEqual({ keys: 'k', models: 'm' });
  });

  it('reads the settings a function requires', () => {
    const config = loadConfig(
      { KEYS_TABLE: 'k', SIGNING_KEY_ARN: 'arn:aws:kms:eu-west-1:1:key/x', INFERENCE_UPSTREAMS: '{}', LOG_LEVEL: 'debug' },
      { tables: ['keys'], settings: ['signingKeyArn', 'inference'] },
    );
    expect(config).toMatchObject({
      signingKeyArn: 'arn:aws:kms:eu-west-1:1:key/x',
      inference: { upstreams: {}, upstreamTimeoutSeconds: 60, providerCredentialsSecretArn: undefined },
      logLevel: 'DEBUG',
    });
  });

  it('reads the inference upstreams without a prototype, trailing slashes removed', () => {
    const { inference } = loadConfig(
      {
        KEYS_TABLE: 'k',
        INFERENCE_UPSTREAMS: '{"*":"https://llm.example.com/api/v1/","local":"development-echo"}',
        UPSTREAM_TIMEOUT_SECONDS: '30',
        PROVIDER_CREDENTIALS_SECRET_ARN: 'arn:secret',
      },
      { tables: ['keys'], settings: ['inference'] },
    );
    expect({ ...inference.upstreams }).toEqual({ '*': 'https://llm.example.com/api/v1', local: 'development-echo' });
    expect(Object.getPrototypeOf(inference.upstreams)).toBeNull();
    expect(inference).toMatchObject({ upstreamTimeoutSeconds: 30, providerCredentialsSecretArn: 'arn:secret' });
  });

  it.each([
    ['http://api.example.com/api/v1', 'API_BASE_URL must be an https:// URL, got "http://api.example.com/api/v1"'],
    ['https://api.example.com/api/v1/', 'API_BASE_URL must have no query, fragment or trailing slash, got "https://api.example.com/api/v1/"'],
    ['api.example.com', 'API_BASE_URL must be an absolute URL, got "api.example.com"'],
  ])('refuses API_BASE_URL %p', (url, message) => {
    expect(() => loadConfig({ KEYS_TABLE: 'k', API_BASE_URL: url }, { tables: ['keys'], settings: ['apiBaseUrl'] })).toThrow(new ConfigError(message));
  });

  it('accepts an https API base URL, and plain http on loopback only', () => {
    for (const url of ['https://api.example.com/api/v1', 'http://127.0.0.1:8787/api/v1']) {
      expect(loadConfig({ KEYS_TABLE: 'k', API_BASE_URL: url }, { tables: ['keys'], settings: ['apiBaseUrl'] }).apiBaseUrl).toBe(url);
    }
  });

  it.each([
    [{}, 'KEYS_TABLE is not set'],
    [{ KEYS_TABLE: 'k', CATALOG_CACHE_SECONDS: 'soon' }, 'CATALOG_CACHE_SECONDS must be an integer from 0 to 3600, got "soon"'],
    [{ KEYS_TABLE: 'k', ACCESS_TOKEN_MAX_LIFETIME_SECONDS: '3600' }, 'ACCESS_TOKEN_MAX_LIFETIME_SECONDS must be an integer from 60 to 900, got "3600"'],
    [{ KEYS_TABLE: 'k', REGIONAL_HOSTNAMES: '["eu"]' }, 'REGIONAL_HOSTNAMES must be a JSON object of region to hostname'],
    [{ KEYS_TABLE: 'k', REGIONAL_HOSTNAMES: '{"eu":""}' }, 'REGIONAL_HOSTNAMES.eu must be a hostname'],
    [{ KEYS_TABLE: 'k', LOG_LEVEL: 'verbose' }, 'LOG_LEVEL must be one of DEBUG, INFO, WARN, ERROR, got "VERBOSE"'],
    [{ KEYS_TABLE: 'k', EXCHANGE_RATE_LIMIT: '0' }, 'EXCHANGE_RATE_LIMIT must be an integer from 1 to 1000000, got "0"'],
    [{ KEYS_TABLE: 'k', MODELGATE_ALLOW_LOOPBACK_ISSUERS: 'yes' }, 'MODELGATE_ALLOW_LOOPBACK_ISSUERS must be 1 or 0, got "yes"'],
    [
      { KEYS_TABLE: 'k', MODELGATE_ALLOW_LOOPBACK_ISSUERS: '1', STAGE: 'prod' },
      'MODELGATE_ALLOW_LOOPBACK_ISSUERS is for the local runtime only, not stage "prod"',
    ],
  ])('fails fast on %p', (env, message) => {
    expect(() => loadConfig(env, { tables: ['keys'] })).toThrow(new ConfigError(message));
  });

  it.each([
    [{ KEYS_TABLE: 'k' }, 'INFERENCE_UPSTREAMS is not set'],
    [{ KEYS_TABLE: 'k', INFERENCE_UPSTREAMS: '{"*":"ftp://x"}' }, 'INFERENCE_UPSTREAMS.* must be an http(s) base URL or "development-echo"'],
    [{ KEYS_TABLE: 'k', INFERENCE_UPSTREAMS: '"https://x"' }, 'INFERENCE_UPSTREAMS must be a JSON object of provider to base URL'],
    [{ KEYS_TABLE: 'k', INFERENCE_UPSTREAMS: '{}', UPSTREAM_TIMEOUT_SECONDS: '0' }, 'UPSTREAM_TIMEOUT_SECONDS must be an integer from 1 to 900, got "0"'],
  ])('fails fast on a missing or malformed required setting: %p', (env, message) => {
    expect(() => loadConfig(env, { tables: ['keys'], settings: ['inference'] })).toThrow(new ConfigError(message));
  });

  it('allows loopback issuers on the local stage only when asked', () => {
    const keys = { tables: ['keys'] } as const;
    expect(loadConfig({ KEYS_TABLE: 'k', MODELGATE_ALLOW_LOOPBACK_ISSUERS: '1' }, keys).allowLoopbackIssuers).toBe(true);
    expect(loadConfig({ KEYS_TABLE: 'k', MODELGATE_ALLOW_LOOPBACK_ISSUERS: '0' }, keys).allowLoopbackIssuers).toBe(false);
    expect(loadConfig({ KEYS_TABLE: 'k', STAGE: 'prod' }, keys).allowLoopbackIssuers).toBe(false);
  });
});
