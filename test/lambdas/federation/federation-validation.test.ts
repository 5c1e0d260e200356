import { DomainError } from '../../../lambdas/errors';
import { multiTenantProvider, parseIssuerCreate } from '../../../lambdas/federation/federation-validation';

/** The save-time host rules see a host as a resolver would: one normalisation (lambdas/hostname.ts) before every check. */
describe('issuer hosts, normalised before the checks', () => {
  const refusal = (issuerUrl: string) => {
    try {
      parseIssuerCreate({ name: 'IdP', issuer_url: issuerUrl }, { allowLoopback: false });
      return 'accepted';
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      return error.message;
    }
  };

  it.each([
    ['https://localhost.', 'localhost.'],
    ['https://LOCALHOST.:8443/realms/x', 'localhost.'],
    ['https://ci.localhost.', 'ci.localhost.'],
  ])('refuses %s as loopback', (url, shown) => {
    expect(refusal(url)).toBe(`Invalid issuer_url: the host ${shown} is not a public address (loopback)`);
  });

  it('refuses a host with an empty label, which no resolver looks up as written', () => {
    expect(refusal('https://localhost..')).toBe('Invalid issuer_url: the host localhost.. is not a valid host name');
  });

  it('accepts a public host written with a trailing dot, as written', () => {
    expect(parseIssuerCreate({ name: 'IdP', issuer_url: 'https://idp.example.com.' }, { allowLoopback: false }).issuerUrl).toBe('https://idp.example.com.');
  });

  it.each(['https://token.actions.githubusercontent.com.', 'https://Token.Actions.GitHubUserContent.com:443/', 'https://gitlab.com.:8443'])(
    'knows %s for the multi-tenant issuer it names',
    (url) => {
      expect(multiTenantProvider(url)).toEqual(expect.any(String));
    },
  );
});
