import { createPublicKey, generateKeyPairSync, X509Certificate } from 'node:crypto';
import { SignJWT } from 'jose';
import { systemClock, type Clock } from '../../../lambdas/clock';
import { FixedClock } from '../../support/fixed-clock';
import { evaluateExchange, type ExchangeDependencies } from '../../../lambdas/federation/evaluate-exchange';
import type { ExchangeEvaluation } from '../../../lambdas/federation/exchange-types';
import { createIssuerKeySource } from '../../../lambdas/federation/issuer-keys';
import { evaluateCondition } from '../../../lambdas/federation/condition';
import { ExchangeWorld, POLICY_ID } from '../../support/federation-fixtures';
import { signJws, startIdentityProvider, type TestIdentityProvider } from '../../support/identity-provider';

/**
 * The exchange's verification against a real HTTPS identity provider (discovery, JWKS, a
 * generated CA), and the JWT attack catalogue: every forgery is refused with its reason, and
 * no header makes the service fetch from where the token says.
 */

const SUBJECT = 'system:serviceaccount:ci:deployer';
const AUDIENCE = 'modelgate';

let idp: TestIdentityProvider;
let attacker: TestIdentityProvider;
let deps: ExchangeDependencies;

beforeAll(async () => {
  idp = await startIdentityProvider({ hostname: 'localhost', issuerPath: '/realms/ci' });
  attacker = await startIdentityProvider({ hostname: 'localhost' });
});
afterAll(() => Promise.all([idp.close(), attacker.close()]));

async function freshDeps(options: { allowLoopback?: boolean; jwksUrl?: string | null; keyClock?: Clock } = {}): Promise<ExchangeDependencies> {
  const world = await ExchangeWorld.create({
    issuer: { issuerUrl: idp.issuerUrl, jwksUrl: options.jwksUrl ?? null },
    policy: { subject: SUBJECT, audience: AUDIENCE, condition: 'audience.size() == 1' },
  });
  return {
    federation: world.federation,
    accounts: world.accounts,
    issuerKeys: createIssuerKeySource({
      clock: options.keyClock ?? systemClock,
      allowLoopback: options.allowLoopback ?? true,
      // The attacker's CA is trusted too: a refusal below is never a TLS failure in disguise.
      extraCaPems: [idp.caPem, attacker.caPem],
    }),
    clock: systemClock,
    evaluateCondition,
  };
}

beforeEach(async () => {
  deps = await freshDeps();
});

const claims = (overrides: Record<string, unknown> = {}) => {
  const now = Math.floor(Date.now() / 1000);
  return { iss: idp.issuerUrl, sub: SUBJECT, aud: AUDIENCE, iat: now, exp: now + 600, ...overrides };
};
const exchange = (subjectToken: string) => evaluateExchange(deps, { subjectToken, policyId: POLICY_ID });
const signatureStep = (evaluation: ExchangeEvaluation) => evaluation.steps.find((s) => s.name === 'signature')!;
const published = (alg: 'ES256' | 'RS256') => idp.keys.find((k) => k.alg === alg)!;

/** Requests each provider saw during `action`. */
async function traffic(action: () => Promise<void>): Promise<{ idp: string[]; attacker: string[] }> {
  const before = [idp.requests.length, attacker.requests.length];
  await action();
  return { idp: idp.requests.slice(before[0]), attacker: attacker.requests.slice(before[1]) };
}

describe('verification against a real HTTPS identity provider', () => {
  it.each(['ES256', 'RS256'] as const)('accepts a %s token, finding the keys through discovery, then serves from cache', async (alg) => {
    const seen = await traffic(async () => {
      const first = await exchange(idp.sign(claims(), { alg }));
      expect(first.result).toBe('pass');
      expect(signatureStep(first).detail).toContain(`The ${alg} signature verifies with key "${published(alg).kid}" of the key set from ${idp.jwksUri}.`);
      expect((await exchange(idp.sign(claims(), { alg }))).result).toBe('pass');
    });
    expect(seen.idp).toEqual(['/realms/ci/.well-known/openid-configuration', '/realms/ci/.well-known/jwks.json']);
  });

  it('uses jwks_url directly when the issuer has one', async () => {
    deps = await freshDeps({ jwksUrl: idp.keysUrl });
    const seen = await traffic(async () => {
      expect((await exchange(idp.sign(claims(), { alg: 'RS256' }))).result).toBe('pass');
    });
    expect(seen.idp).toEqual(['/realms/ci/keys']);
  });

  it('accepts tokens signed by jose, as real identity providers make them', async () => {
    for (const key of [published('ES256'), published('RS256')]) {
      const jwt = await new SignJWT(claims()).setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT' }).sign(key.privateKey);
      expect((await exchange(jwt)).result).toBe('pass');
    }
  });

  it('picks up a rotated-in key with one refetch, and does not refetch again for a flood of unknown kids', async () => {
    // The key cache runs on its own clock, moved past the 30 s refetch interval by hand.
    const keyClock = new FixedClock(new Date());
    deps = await freshDeps({ keyClock });
    expect((await exchange(idp.sign(claims()))).result).toBe('pass');
    const rotated = idp.addKey('ES256', `rotated-${Date.now()}`);
    try {
      const seen = await traffic(async () => {
        expect((await exchange(idp.sign(claims(), { kid: rotated.kid }))).reason).toBe('unknown_kid');
        keyClock.advance(30_000);
        expect((await exchange(idp.sign(claims(), { kid: rotated.kid }))).result).toBe('pass');
        for (let i = 0; i < 20; i++) {
          const evaluation = await exchange(idp.sign(claims(), { kid: `random-${i}`, privateKey: rotated.privateKey }));
          expect(evaluation.reason).toBe('unknown_kid');
        }
      });
      expect(seen.idp).toEqual(['/realms/ci/.well-known/openid-configuration', '/realms/ci/.well-known/jwks.json']);
    } finally {
      idp.removeKey(rotated.kid);
    }
  });

  it('answers keys_unavailable when the key set cannot be fetched and nothing is cached', async () => {
    idp.respond('/realms/ci/.well-known/jwks.json', { status: 503 });
    try {
      const evaluation = await exchange(idp.sign(claims()));
      expect(evaluation.reason).toBe('keys_unavailable');
      expect(signatureStep(evaluation).detail).toBe(`The issuer's keys cannot be fetched and none are cached: ${idp.jwksUri}: answered HTTP 503`);
    } finally {
      idp.respond('/realms/ci/.well-known/jwks.json', null);
    }
  });

  it('counts a loopback identity provider as unreachable when loopback is not allowed', async () => {
    deps = await freshDeps({ allowLoopback: false });
    const seen = await traffic(async () => {
      const evaluation = await exchange(idp.sign(claims()));
      expect(evaluation.reason).toBe('keys_unavailable');
      expect(signatureStep(evaluation).detail).toMatch(/localhost resolves only to refused addresses: .*\(loopback\)$/);
    });
    expect(seen.idp).toEqual([]);
  });
});

describe('the JWT attack catalogue', () => {
  const attackerEc = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const attackerRsa = generateKeyPairSync('rsa', { modulusLength: 2048 });

  it.each(['none', 'None', 'NONE'])('refuses alg %s', async (alg) => {
    const evaluation = await exchange(signJws({ alg, kid: published('ES256').kid }, claims(), { alg: 'none' }));
    expect(evaluation.reason).toBe('unsupported_alg');
    expect(signatureStep(evaluation).detail).toBe(`The token's header alg is "${alg}"; only ES256 and RS256 are accepted.`);
  });

  it('refuses HS256 keyed with the RSA public key (PEM, DER and JWK forms)', async () => {
    const rsaPublic = createPublicKey(published('RS256').privateKey);
    const secrets = [
      rsaPublic.export({ type: 'spki', format: 'pem' }),
      rsaPublic.export({ type: 'pkcs1', format: 'pem' }),
      rsaPublic.export({ type: 'spki', format: 'der' }),
      JSON.stringify(published('RS256').publicJwk),
    ];
    for (const secret of secrets) {
      const evaluation = await exchange(signJws({ alg: 'HS256', kid: published('RS256').kid }, claims(), { alg: 'HS256', secret }));
      expect(evaluation.reason).toBe('unsupported_alg');
    }
  });

  it.each(['ES256', 'RS256'] as const)('refuses a %s token with its signature stripped', async (alg) => {
    const [h, p] = idp.sign(claims(), { alg }).split('.');
    const evaluation = await exchange(`${h}.${p}.`);
    expect(evaluation.reason).toBe('bad_signature');
  });

  it('refuses a signature swapped in from another valid token of the same key', async () => {
    const [h, p] = idp.sign(claims({ sub: SUBJECT })).split('.');
    const [, , s] = idp.sign(claims({ sub: 'system:serviceaccount:ci:other' })).split('.');
    expect((await exchange(`${h}.${p}.${s}`)).reason).toBe('bad_signature');
  });

  it('refuses an ES256 signature with r = s = 0 (and other degenerate values)', async () => {
    const [h, p] = idp.sign(claims()).split('.');
    const order = Buffer.from('ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551', 'hex');
    for (const signature of [Buffer.alloc(64), Buffer.concat([order, order]), Buffer.alloc(64, 0xff), Buffer.alloc(65)]) {
      const evaluation = await exchange(`${h}.${p}.${signature.toString('base64url')}`);
      expect(evaluation.reason).toBe('bad_signature');
    }
  });

  it('ignores an embedded jwk header: the attacker key it carries is never used', async () => {
    const jwk = attackerEc.publicKey.export({ format: 'jwk' });
    for (const kid of [undefined, published('ES256').kid]) {
      const forged = signJws({ alg: 'ES256', jwk, ...(kid ? { kid } : {}) }, claims(), { alg: 'ES256', privateKey: attackerEc.privateKey });
      expect((await exchange(forged)).reason).toBe('bad_signature');
    }
  });

  it.each(['jku', 'x5u'])('never fetches the %s header URL', async (member) => {
    attacker.addKey('ES256', 'attacker-1');
    const attackerKey = attacker.keys.find((k) => k.kid === 'attacker-1')!;
    const seen = await traffic(async () => {
      for (const kid of ['attacker-1', published('ES256').kid]) {
        const forged = signJws({ alg: 'ES256', kid, [member]: attacker.jwksUri }, claims(), { alg: 'ES256', privateKey: attackerKey.privateKey });
        const evaluation = await exchange(forged);
        expect(evaluation.reason).toBe(kid === 'attacker-1' ? 'unknown_kid' : 'bad_signature');
      }
    });
    expect(seen.attacker).toEqual([]);
    expect(seen.idp.every((path) => path.startsWith('/realms/ci/.well-known/') || path === '/realms/ci/.well-known/jwks.json')).toBe(true);
    attacker.removeKey('attacker-1');
  });

  it('ignores an x5c header carrying a certificate for the attacker key', async () => {
    const cert = new X509Certificate(attacker.ca.certPem);
    const forged = signJws({ alg: 'ES256', x5c: [cert.raw.toString('base64')] }, claims(), { alg: 'ES256', privateKey: attackerEc.privateKey });
    expect((await exchange(forged)).reason).toBe('bad_signature');
  });

  it.each([
    ['ES256', () => attackerEc.privateKey],
    ['RS256', () => attackerRsa.privateKey],
  ] as const)('refuses an attacker %s key presented under a real kid', async (alg, privateKey) => {
    const forged = idp.sign(claims(), { alg, privateKey: privateKey() });
    const evaluation = await exchange(forged);
    expect(evaluation.reason).toBe('bad_signature');
    expect(signatureStep(evaluation).detail).toBe(`The signature does not verify with key "${published(alg).kid}" (${alg}) of the key set from ${idp.jwksUri}.`);
  });

  it('refuses a header algorithm that does not match the key under the kid (RS256 key, ES256 header)', async () => {
    const forged = signJws({ alg: 'ES256', kid: published('RS256').kid }, claims(), { alg: 'ES256', privateKey: attackerEc.privateKey });
    expect((await exchange(forged)).reason).toBe('unsupported_alg');
  });

  it('refuses any crit extension, even on a genuinely signed token', async () => {
    for (const header of [{ crit: ['exp'], exp: 1 }, { crit: ['https://example.com/ext'], 'https://example.com/ext': true }, { crit: [] }]) {
      const evaluation = await exchange(idp.sign(claims(), { header }));
      expect(evaluation.reason).toBe('malformed_token');
      expect(signatureStep(evaluation).detail).toMatch(/^The token's header marks .* as critical; no JWS extension is accepted\.$/);
    }
  });

  it('refuses an unencoded payload (b64=false), with or without crit', async () => {
    const key = published('ES256');
    const payload = JSON.stringify(claims());
    const header = Buffer.from(JSON.stringify({ alg: 'ES256', kid: key.kid, b64: false, crit: ['b64'] })).toString('base64url');
    const { sign } = await import('node:crypto');
    const signature = sign('sha256', Buffer.from(`${header}.${payload}`), { key: key.privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url');
    expect((await exchange(`${header}.${payload}.${signature}`)).reason).toBe('malformed_token');
    expect((await exchange(`${header}..${signature}`)).reason).toBe('malformed_token');
    const withoutCrit = await exchange(idp.sign(claims(), { header: { b64: false } }));
    expect(withoutCrit.reason).toBe('malformed_token');
    expect(signatureStep(withoutCrit).detail).toBe('The token uses an unencoded payload (b64, RFC 7797), which is not accepted.');
  });

  it('treats a path-traversal kid as an opaque string: unknown, and never part of a URL', async () => {
    const kids = ['../../../../etc/passwd', '/.well-known/openid-configuration', '..%2f..%2fadmin', 'es-1/../../keys'];
    const seen = await traffic(async () => {
      for (const kid of kids) {
        const evaluation = await exchange(signJws({ alg: 'ES256', kid }, claims(), { alg: 'ES256', privateKey: attackerEc.privateKey }));
        expect(evaluation.reason).toBe('unknown_kid');
      }
    });
    expect(seen.idp).toEqual(['/realms/ci/.well-known/openid-configuration', '/realms/ci/.well-known/jwks.json']);
  });

  it.each(['at+jwt', 'AT+JWT', 'application/at+jwt'])('refuses a genuinely signed token whose header typ is %s', async (typ) => {
    const evaluation = await exchange(idp.sign(claims(), { header: { typ } }));
    expect(evaluation.reason).toBe('token_type_refused');
    expect(signatureStep(evaluation).detail).toBe(`The token's header typ is "${typ}": access tokens are not accepted as subject tokens.`);
  });

  it('refuses a token signed by the attacker IdP for the victim issuer URL', async () => {
    const forged = attacker.sign(claims({ iss: idp.issuerUrl }), { kid: published('ES256').kid });
    expect((await exchange(forged)).reason).toBe('bad_signature');
  });

  it("verifies the attacker IdP's token under its own issuer URL with the policy issuer's keys only", async () => {
    // Both providers name their first keys alike: the kid matches, the key does not.
    const forged = attacker.sign(claims({ iss: attacker.issuerUrl }));
    expect((await exchange(forged)).reason).toBe('bad_signature');
  });
});
