import { ConfigError, loadConfig } from '../../lambdas/config';

describe('loadConfig', () => {
  it('reads table names, hostnames and limits, with defaults, into a frozen object', () => {
    const config = loadConfig({ KEYS_TABLE: 'keys-t', REGIONAL_HOSTNAMES: '{"eu":"EU.api.example.com."}' }, ['keys']);
    expect(config).toEqual({
      tables: { keys: 'keys-t' },
      regionalHostnames: { eu: 'eu.api.example.com' },
      catalogCacheSeconds: 30,
      accessTokenMaxLifetimeSeconds: 900,
      signingKeyArn: undefined,
      localSigningKeyPath: undefined,
      stage: 'local',
      apiBaseUrl: undefined,
      exchangeRateLimit: 60,
      exchangeRateWindowSeconds: 60,
      allowLoopbackIssuers: false,
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it.each([
    [{}, 'KEYS_TABLE is not set'],
    [{ KEYS_TABLE: 'k', CATALOG_CACHE_SECONDS: 'soon' }, 'CATALOG_CACHE_SECONDS must be an integer from 0 to 3600, got "soon"'],
    [{ KEYS_TABLE: 'k', ACCESS_TOKEN_MAX_LIFETIME_SECONDS: '3600' }, 'ACCESS_TOKEN_MAX_LIFETIME_SECONDS must be an integer from 60 to 900, got "3600"'],
    [{ KEYS_TABLE: 'k', REGIONAL_HOSTNAMES: '["eu"]' }, 'REGIONAL_HOSTNAMES must be a JSON object of region to hostname'],
    [{ KEYS_TABLE: 'k', REGIONAL_HOSTNAMES: '{"eu":""}' }, 'REGIONAL_HOSTNAMES.eu must be a hostname'],
    [{ KEYS_TABLE: 'k', API_BASE_URL: 'http://api.example.com/api/v1' }, 'API_BASE_URL must be an https:// URL, got "http://api.example.com/api/v1"'],
    [{ KEYS_TABLE: 'k', API_BASE_URL: 'https://api.example.com/api/v1/' }, 'API_BASE_URL must have no query, fragment or trailing slash, got "https://api.example.com/api/v1/"'],
    [{ KEYS_TABLE: 'k', EXCHANGE_RATE_LIMIT: '0' }, 'EXCHANGE_RATE_LIMIT must be an integer from 1 to 1000000, got "0"'],
    [{ KEYS_TABLE: 'k', MODELGATE_ALLOW_LOOPBACK_ISSUERS: 'yes' }, 'MODELGATE_ALLOW_LOOPBACK_ISSUERS must be 1 or 0, got "yes"'],
    [
      { KEYS_TABLE: 'k', MODELGATE_ALLOW_LOOPBACK_ISSUERS: '1', STAGE: 'prod' },
      'MODELGATE_ALLOW_LOOPBACK_ISSUERS is for the local runtime only, not stage "prod"',
    ],
  ])('fails fast on %p', (env, message) => {
    expect(() => loadConfig(env, ['keys'])).toThrow(new ConfigError(message));
  });

  it('allows loopback issuers on the local stage only when asked', () => {
    expect(loadConfig({ KEYS_TABLE: 'k', MODELGATE_ALLOW_LOOPBACK_ISSUERS: '1' }, ['keys']).allowLoopbackIssuers).toBe(true);
    expect(loadConfig({ KEYS_TABLE: 'k', MODELGATE_ALLOW_LOOPBACK_ISSUERS: '0' }, ['keys']).allowLoopbackIssuers).toBe(false);
    expect(loadConfig({ KEYS_TABLE: 'k', STAGE: 'prod' }, ['keys']).allowLoopbackIssuers).toBe(false);
  });
});
