import { localRuntimeOptionsFromEnvironment } from '../../local/environment';

describe("npm start's environment", () => {
  it('defaults to port 8787, .local, loopback issuers allowed and 60 exchanges a minute', () => {
    expect(localRuntimeOptionsFromEnvironment({})).toEqual({
      port: 8787,
      dataDir: '.local',
      allowLoopbackIssuers: true,
      exchangeRateLimit: 60,
      publicCatalog: false,
      corsAllowedOrigins: ['*'],
    });
  });

  it('reads PORT, MODELGATE_DATA_DIR, MODELGATE_ALLOW_LOOPBACK_ISSUERS, MODELGATE_EXCHANGE_LIMIT, MODELGATE_PUBLIC_CATALOG and MODELGATE_CORS_ALLOWED_ORIGINS', () => {
    expect(
      localRuntimeOptionsFromEnvironment({
        PORT: '9000',
        MODELGATE_DATA_DIR: '/tmp/mg',
        MODELGATE_ALLOW_LOOPBACK_ISSUERS: '0',
        MODELGATE_EXCHANGE_LIMIT: '5',
        MODELGATE_PUBLIC_CATALOG: '1',
        MODELGATE_CORS_ALLOWED_ORIGINS: 'https://app.example.com, http://localhost:3000',
      }),
    ).toEqual({
      port: 9000,
      dataDir: '/tmp/mg',
      allowLoopbackIssuers: false,
      exchangeRateLimit: 5,
      publicCatalog: true,
      corsAllowedOrigins: ['https://app.example.com', 'http://localhost:3000'],
    });
  });

  it.each([
    [{ PORT: '80a' }, 'PORT must be a port number, got "80a"'],
    [{ PORT: '70000' }, 'PORT must be a port number, got "70000"'],
    [{ MODELGATE_EXCHANGE_LIMIT: '0' }, 'MODELGATE_EXCHANGE_LIMIT must be an integer from 1 to 1000000, got "0"'],
    [{ MODELGATE_EXCHANGE_LIMIT: '1.5' }, 'MODELGATE_EXCHANGE_LIMIT must be an integer from 1 to 1000000, got "1.5"'],
    [{ MODELGATE_PUBLIC_CATALOG: 'yes' }, 'MODELGATE_PUBLIC_CATALOG must be true or false (1 or 0), got "yes"'],
    [{ MODELGATE_CORS_ALLOWED_ORIGINS: 'https://app.example.com/' }, 'must be "*" or origins such as https://app.example.com'],
  ])('refuses %j', (env, message) => {
    expect(() => localRuntimeOptionsFromEnvironment(env)).toThrow(message);
  });
});
