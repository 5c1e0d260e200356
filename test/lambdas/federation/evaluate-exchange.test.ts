import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import type { JWK } from 'jose';
import { evaluateExchange, type ExchangeDependencies } from '../../../lambdas/federation/evaluate-exchange';
import type { ExchangeEvaluation, ExchangeStepName } from '../../../lambdas/federation/exchange-types';
import type { IssuerKeySource } from '../../../lambdas/federation/issuer-keys';
import type { FederationPolicy } from '../../../lambdas/federation/types';
import { evaluateCondition, evaluateConditionMetered } from '../../../lambdas/federation/condition';
import { CONDITION_TIME_LIMIT_MS } from '../../../lambdas/federation/limits';
import { ExchangeWorld, ISSUER_ID, ORG_ID, POLICY_ID, WORKSPACE_KEY_HASH, makeOrganization, makeWorkspaceKey } from '../../support/federation-fixtures';
import { FixedClock } from '../../support/fixed-clock';
import { signJws } from '../../support/identity-provider';

const ISSUER_URL = 'https://idp.example.com';
const AUDIENCE = 'https://modelgate.example.com';
const SUBJECT = 'repo:acme/app:ref:refs/heads/main';
const NOW = new Date('2026-11-21T12:00:00Z');
const NOW_S = NOW.getTime() / 1000;

function keyPair(alg: 'ES256' | 'RS256', kid: string, bits = 2048): { kid: string; alg: 'ES256' | 'RS256'; privateKey: KeyObject; jwk: JWK } {
  const pair = alg === 'ES256' ? generateKeyPairSync('ec', { namedCurve: 'P-256' }) : generateKeyPairSync('rsa', { modulusLength: bits });
  return { kid, alg, privateKey: pair.privateKey, jwk: { ...(pair.publicKey.export({ format: 'jwk' }) as JWK), kid, alg, use: 'sig' } };
}

const es = keyPair('ES256', 'es-1');
const rs = keyPair('RS256', 'rs-1');

/** Uses the issuer's inline set, like the real source does; no network in these tests. */
const inlineKeys: IssuerKeySource = {
  getKeys: async (i) => (i.jwks ? { status: 'available', set: { keys: i.jwks.keys, origin: 'inline JWK Set', fetchedAt: null } } : { status: 'unavailable', problem: 'no inline set' }),
};

function claims(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { iss: ISSUER_URL, sub: SUBJECT, aud: AUDIENCE, iat: NOW_S - 10, exp: NOW_S + 300, jti: 'j-1', ...overrides };
}

function token(payload: Record<string, unknown> = claims(), options: { key?: typeof es; header?: Record<string, unknown> } = {}): string {
  const key = options.key ?? es;
  return signJws({ alg: key.alg, kid: key.kid, typ: 'JWT', ...options.header }, payload, { alg: key.alg, privateKey: key.privateKey });
}

let world: ExchangeWorld;
let clock: FixedClock;
let deps: ExchangeDependencies;

beforeEach(async () => {
  world = await ExchangeWorld.create({ issuer: { issuerUrl: ISSUER_URL, jwks: { keys: [es.jwk, rs.jwk] } }, policy: { subject: SUBJECT, audience: AUDIENCE } });
  clock = new FixedClock(NOW);
  deps = { federation: world.federation, accounts: world.accounts, issuerKeys: inlineKeys, clock, evaluateCondition };
});

const evaluate = (subjectToken: string, policyId = POLICY_ID) => evaluateExchange(deps, { subjectToken, policyId });
const setPolicy = (overrides: Partial<FederationPolicy>) => world.updatePolicy(overrides);
const statuses = (evaluation: ExchangeEvaluation) => evaluation.steps.map((step) => `${step.name}:${step.status}`);
const step = (evaluation: ExchangeEvaluation, name: ExchangeStepName) => evaluation.steps.find((s) => s.name === name)!;

/** The step list of a refusal at `failing`: passed before, not_reached after. */
function refusedAt(failing: ExchangeStepName): string[] {
  const order: ExchangeStepName[] = ['size_limits', 'policy_state', 'signature', 'iss', 'aud', 'sub', 'claim_check:scopes', 'claim_check:token_type', 'condition'];
  const at = order.indexOf(failing);
  return order.map((name, i) => `${name}:${i < at ? 'passed' : i === at ? 'failed' : 'not_reached'}`);
}

describe('evaluateExchange: a token that satisfies the policy', () => {
  it.each([['ES256', es], ['RS256', rs]] as const)('passes every step with %s and carries the verified claims forward', async (_alg, key) => {
    const evaluation = await evaluate(token(claims({ scopes: ['deploy'], token_type: 'id' }), { key }));
    expect(evaluation.result).toBe('pass');
    expect(evaluation.reason).toBeNull();
    expect(evaluation.steps.every((s) => s.status === 'passed')).toBe(true);
    expect(evaluation.steps.map((s) => s.name)).toEqual(['size_limits', 'policy_state', 'signature', 'iss', 'aud', 'sub', 'claim_check:scopes', 'claim_check:token_type', 'condition']);
    expect(evaluation.claims).toEqual({ sub: SUBJECT, aud: [AUDIENCE], exp: NOW_S + 300, iat: NOW_S - 10, jti: 'j-1', scopes: ['deploy'], token_type: 'id' });
    expect(evaluation.policy?.id).toBe(POLICY_ID);
    expect(evaluation.issuer?.id).toBe(ISSUER_ID);
    expect(evaluation.organization?.id).toBe(ORG_ID);
    expect(evaluation.key?.hash).toBe(WORKSPACE_KEY_HASH);
    expect(step(evaluation, 'signature').detail).toBe(
      `The ${key.alg} signature verifies with key "${key.kid}" of the key set from inline JWK Set. It is valid until 2026-11-21T12:05:00.000Z (nbf and iat with 30 s leeway).`,
    );
  });

  it('finds the key by algorithm when the token names no kid', async () => {
    const evaluation = await evaluate(token(claims(), { key: rs, header: { kid: undefined } }));
    expect(evaluation.result).toBe('pass');
    expect(step(evaluation, 'signature').detail).toContain('with key "rs-1"');
  });

  it('accepts one matching value among several audiences, exactly', async () => {
    const evaluation = await evaluate(token(claims({ aud: ['other', AUDIENCE] })));
    expect(evaluation.result).toBe('pass');
    expect(evaluation.claims?.aud).toEqual(['other', AUDIENCE]);
  });
});

describe('evaluateExchange: docs/reference.md#limits size limits come before any rule', () => {
  it('refuses a 513-character sub before looking at the (paused) policy, and still names the policy for the event', async () => {
    await setPolicy({ enabled: false });
    const evaluation = await evaluate(token(claims({ sub: 'x'.repeat(513) })));
    expect(evaluation.reason).toBe('claim_too_large');
    expect(statuses(evaluation)).toEqual(refusedAt('size_limits'));
    expect(step(evaluation, 'size_limits').detail).toBe('sub has 513 characters; at most 512 are accepted.');
    expect(evaluation.policy?.id).toBe(POLICY_ID);
    expect(evaluation.unverifiedSubject).toBe('x'.repeat(512));
    expect(evaluation.claims).toBeNull();
  });

  it('counts characters, not UTF-16 units: 512 emoji pass the limit', async () => {
    const sub = '🚀'.repeat(512);
    await setPolicy({ subject: sub });
    expect((await evaluate(token(claims({ sub })))).result).toBe('pass');
  });

  it.each([
    ['a long aud string', { aud: 'a'.repeat(513) }, 'aud value 1 has 513 characters; at most 512 are accepted.'],
    ['a long aud list entry', { aud: [AUDIENCE, 'a'.repeat(600)] }, 'aud value 2 has 600 characters; at most 512 are accepted.'],
    ['17 scopes', { scopes: Array.from({ length: 17 }, (_, i) => `s${i}`) }, 'scopes has 17 entries; at most 16 are accepted.'],
    ['a long scope', { scopes: ['ok', 's'.repeat(513)] }, 'scopes entry 2 has 513 characters; at most 512 are accepted.'],
  ])('refuses %s as claim_too_large', async (_name, overrides, detail) => {
    const evaluation = await evaluate(token(claims(overrides)));
    expect(evaluation.reason).toBe('claim_too_large');
    expect(step(evaluation, 'size_limits')).toEqual({ name: 'size_limits', status: 'failed', detail });
  });

  it('accepts the limits themselves: 16 scopes of 512 characters, a 512-character sub', async () => {
    const sub = 's'.repeat(512);
    await setPolicy({ subject: sub });
    const scopes = Array.from({ length: 16 }, (_, i) => `${i}`.padEnd(512, 'x'));
    expect((await evaluate(token(claims({ sub, scopes })))).result).toBe('pass');
  });

  it('refuses a token whose payload is not a JSON object as malformed_token', async () => {
    const header = Buffer.from(JSON.stringify({ alg: 'ES256', kid: 'es-1' })).toString('base64url');
    const evaluation = await evaluate(`${header}.${Buffer.from('[1,2]').toString('base64url')}.AAAA`);
    expect(evaluation.reason).toBe('malformed_token');
    expect(step(evaluation, 'size_limits').detail).toMatch(/^The token cannot be decoded: the payload is not a base64url-encoded JSON object/);
  });
});

describe('evaluateExchange: the policy and what it stands on (docs/reference.md#lifecycle)', () => {
  const cases: Array<[string, () => unknown, string, string]> = [
    ['an unknown policy id', () => world.federation.deletePolicy(ORG_ID, POLICY_ID), 'policy_not_found', `No policy has the id "${POLICY_ID}"; it may have been deleted.`],
    ['a paused policy', () => setPolicy({ enabled: false }), 'policy_paused', 'The policy "Deploy from main" is paused.'],
    ['a deleted issuer', () => world.federation.deleteIssuer(ORG_ID, ISSUER_ID), 'issuer_deleted', `The issuer ${ISSUER_ID} of the policy has been deleted.`],
    ['a deleted organization', () => world.organizations.clear(), 'no_entitlement', `The organization ${ORG_ID} no longer exists.`],
    ['a plan without federation', () => world.organizations.set(ORG_ID, makeOrganization({ plan: 'pro' })), 'no_entitlement', "The organization's plan (pro) does not include workload identity federation."],
    ['a deleted acting key', () => world.keys.clear(), 'key_deleted', 'The API key the policy acts as has been deleted.'],
    ['an acting key of another organization', () => world.keys.set(WORKSPACE_KEY_HASH, makeWorkspaceKey({ organizationId: 'other-org' })), 'key_deleted', 'The API key the policy acts as has been deleted.'],
    ['a disabled acting key', () => world.keys.set(WORKSPACE_KEY_HASH, makeWorkspaceKey({ disabled: true })), 'key_disabled', 'The API key sk-mg-v1-…a1b2 the policy acts as is disabled.'],
    ['an acting key that expired this instant', () => world.keys.set(WORKSPACE_KEY_HASH, makeWorkspaceKey({ expiresAt: NOW.toISOString() })), 'key_expired', `The API key sk-mg-v1-…a1b2 the policy acts as expired at ${NOW.toISOString()}.`],
    ['a personal acting key', () => world.keys.set(WORKSPACE_KEY_HASH, makeWorkspaceKey({ kind: 'personal' })), 'key_disabled', 'The acting key sk-mg-v1-…a1b2 is a personal key, which a policy cannot act as.'],
    ['a scope that does not follow the key kind', () => setPolicy({ scope: 'management' }), 'key_disabled', 'The policy grants management but the acting key sk-mg-v1-…a1b2 is a workspace key.'],
  ];
  it.each(cases)('refuses %s', async (_name, arrange, reason, detail) => {
    await arrange();
    const evaluation = await evaluate(token());
    expect(evaluation.reason).toBe(reason);
    expect(statuses(evaluation)).toEqual(refusedAt('policy_state'));
    expect(step(evaluation, 'policy_state').detail).toBe(detail);
  });

  it('does not send an implausible policy id to the store', async () => {
    const getPolicy = jest.spyOn(world.federation, 'getPolicy');
    const evaluation = await evaluate(token(), 'p'.repeat(129));
    expect(evaluation.reason).toBe('policy_not_found');
    expect(getPolicy).not.toHaveBeenCalled();
  });

  it('accepts an acting key that expires later', async () => {
    world.keys.set(WORKSPACE_KEY_HASH, makeWorkspaceKey({ expiresAt: new Date(NOW.getTime() + 1000).toISOString() }));
    expect((await evaluate(token())).result).toBe('pass');
  });

  it('throws when a store cannot be read: infrastructure failure is not a refusal', async () => {
    jest.spyOn(world.federation, 'getPolicy').mockRejectedValue(new Error('ProvisionedThroughputExceededException'));
    const told = jest.fn(); // a failed read is an answer too
    await expect(evaluateExchange(deps, { subjectToken: token(), policyId: POLICY_ID, onPolicyRead: told })).rejects.toThrow('ProvisionedThroughputExceededException');
    expect(told).toHaveBeenCalledTimes(1);
  });

  it('tells the caller once admitted and the policy has answered, as the issuer, organization and key reads start', async () => {
    const [read, answered, told] = [world.federation.getPolicy.bind(world.federation), jest.fn(), jest.fn()];
    jest.spyOn(world.federation, 'getPolicy').mockImplementation(async (id) => (await new Promise((resolve) => setTimeout(resolve, 100)), answered(), read(id)));
    const getIssuer = jest.spyOn(world.federation, 'getIssuer');
    // Admitted after 20 ms; the policy answers after 100.
    const evaluation = await evaluateExchange(deps, { subjectToken: token(), policyId: POLICY_ID, admitted: new Promise((resolve) => setTimeout(resolve, 20)), onPolicyRead: told });
    expect(evaluation.result).toBe('pass');
    const order = [answered, told, getIssuer].map((mock) => mock.mock.invocationCallOrder[0]!);
    expect(order).toEqual([...order].sort((a, b) => a - b));
  });
});

describe('evaluateExchange: signature and validity', () => {
  it('refuses an unknown kid and lists the kids the set has', async () => {
    const evaluation = await evaluate(token(claims(), { header: { kid: 'rotated-away' } }));
    expect(evaluation.reason).toBe('unknown_kid');
    expect(statuses(evaluation)).toEqual(refusedAt('signature'));
    expect(step(evaluation, 'signature').detail).toBe('No key with kid "rotated-away" is in the key set from inline JWK Set; it has "es-1", "rs-1".');
  });

  it('answers keys_unavailable when the key source has nothing', async () => {
    deps.issuerKeys = { getKeys: async () => ({ status: 'unavailable', problem: 'https://idp.example.com/jwks: connection refused' }) };
    const evaluation = await evaluate(token());
    expect(evaluation.reason).toBe('keys_unavailable');
    expect(step(evaluation, 'signature').detail).toBe("The issuer's keys cannot be fetched and none are cached: https://idp.example.com/jwks: connection refused");
  });

  it('takes the algorithm from the key: an RS256 header over the EC key is refused', async () => {
    const evaluation = await evaluate(signJws({ alg: 'RS256', kid: 'es-1' }, claims(), { alg: 'RS256', privateKey: rs.privateKey }));
    expect(evaluation.reason).toBe('unsupported_alg');
    expect(step(evaluation, 'signature').detail).toBe(`No key can verify this token: key "es-1" verifies ES256, but the token's header says RS256.`);
  });

  it.each([
    ['an RSA key under 2048 bits', () => keyPair('RS256', 'small', 1024).jwk, 'key "small" is RSA of 1024 bits; from 2048 to 8192 are accepted'],
    ['an encryption key', () => ({ ...es.jwk, kid: 'small', use: 'enc' }), 'key "small" is published for use enc, not sig'],
    ['a key declaring another alg', () => ({ ...es.jwk, kid: 'small', alg: 'ES384' }), 'key "small" declares alg ES384; it may only verify ES256'],
    ['a P-384 key', () => ({ ...(generateKeyPairSync('ec', { namedCurve: 'P-384' }).publicKey.export({ format: 'jwk' }) as JWK), kid: 'small' }), 'key "small" is EC P-384; only EC P-256 (ES256) and RSA (RS256) keys are accepted'],
    ['a symmetric key', () => ({ kty: 'oct', k: 'c2VjcmV0', kid: 'small' }), 'key "small" is oct; only EC P-256 (ES256) and RSA (RS256) keys are accepted'],
  ])('refuses a token whose key is %s', async (_name, jwk, problem) => {
    await world.updateIssuer({ jwks: { keys: [jwk() as JWK] } });
    const evaluation = await evaluate(token(claims(), { header: { kid: 'small' } }));
    expect(evaluation.reason).toBe('unsupported_alg');
    expect(step(evaluation, 'signature').detail).toBe(`No key can verify this token: ${problem}.`);
  });

  it('refuses an altered payload as bad_signature without echoing the token', async () => {
    const [h, , s] = token().split('.');
    const forgedPayload = Buffer.from(JSON.stringify(claims({ sub: 'repo:acme/app:ref:refs/heads/main', aud: [AUDIENCE, 'x'] }))).toString('base64url');
    const forged = `${h}.${forgedPayload}.${s}`;
    const evaluation = await evaluate(forged);
    expect(evaluation.reason).toBe('bad_signature');
    expect(step(evaluation, 'signature').detail).toBe('The signature does not verify with key "es-1" (ES256) of the key set from inline JWK Set.');
    expect(JSON.stringify(evaluation)).not.toContain(s);
    expect(JSON.stringify(evaluation)).not.toContain(forgedPayload);
    expect(evaluation.claims).toBeNull();
    expect(evaluation.unverifiedSubject).toBe(SUBJECT);
  });

  it('refuses a token from the second of its exp, with no leeway, and accepts it while a whole second is left', async () => {
    clock.set(new Date((NOW_S + 299) * 1000));
    expect((await evaluate(token())).result).toBe('pass');
    clock.set(new Date((NOW_S + 299) * 1000 + 1));
    expect((await evaluate(token())).reason).toBe('expired');
    clock.set(new Date((NOW_S + 300) * 1000));
    const evaluation = await evaluate(token());
    expect(evaluation.reason).toBe('expired');
    expect(statuses(evaluation)).toEqual(refusedAt('signature'));
    expect(step(evaluation, 'signature').detail).toBe(
      'The token expired at 2026-11-21T12:05:00.000Z; it is now 2026-11-21T12:05:00.000Z (no leeway on exp: an issued token never outlives the exchanged one).',
    );
  });

  it.each([
    ['no exp', { exp: undefined }, 'expired', 'The token has no exp claim; an expiry is required.'],
    ['a string exp', { exp: String(NOW_S + 300) }, 'malformed_token', 'The token exp claim is not a number of seconds (NumericDate).'],
    ['nbf 31 s ahead', { nbf: NOW_S + 31 }, 'not_yet_valid', 'The token is not valid before 2026-11-21T12:00:31.000Z; it is now 2026-11-21T12:00:00.000Z (30 s leeway).'],
    ['iat 31 s ahead', { iat: NOW_S + 31 }, 'not_yet_valid', 'The token was issued in the future, at 2026-11-21T12:00:31.000Z; it is now 2026-11-21T12:00:00.000Z (30 s leeway).'],
  ])('refuses a token with %s', async (_name, overrides, reason, detail) => {
    const evaluation = await evaluate(token(claims(overrides)));
    expect(evaluation.reason).toBe(reason);
    expect(step(evaluation, 'signature').detail).toBe(detail);
  });

  it('accepts fractional NumericDates (RFC 7519 §2) and carries exp and iat forward in whole seconds', async () => {
    const evaluation = await evaluate(token(claims({ exp: NOW_S + 120.37, iat: NOW_S - 0.75, nbf: NOW_S - 0.75 })));
    expect(evaluation.result).toBe('pass');
    expect(evaluation.claims).toMatchObject({ exp: NOW_S + 120, iat: NOW_S - 1 });
  });

  it('honours nbf and iat within the leeway', async () => {
    expect((await evaluate(token(claims({ nbf: NOW_S + 29, iat: NOW_S + 29 })))).result).toBe('pass');
  });
});

describe('evaluateExchange: iss, aud and sub are compared exactly', () => {
  it.each([
    ['iss with a trailing slash', { iss: `${ISSUER_URL}/` }, 'iss', 'iss_mismatch', `The token iss "${ISSUER_URL}/" does not equal the issuer URL "${ISSUER_URL}" character for character.`],
    ['no iss', { iss: undefined }, 'iss', 'iss_mismatch', 'The token has no iss, or iss is not a string.'],
    ['an audience differing in case', { aud: AUDIENCE.toUpperCase() }, 'aud', 'aud_mismatch', `No aud value of the token ("${AUDIENCE.toUpperCase()}") equals the policy audience "${AUDIENCE}" exactly.`],
    ['a numeric aud', { aud: 7 }, 'aud', 'aud_mismatch', 'The token has no aud, or aud is not a string or a list of strings.'],
    ['another subject', { sub: `${SUBJECT}x` }, 'sub', 'sub_mismatch', `The token sub "${SUBJECT}x" does not equal the policy subject "${SUBJECT}" (exact, case-sensitive).`],
    ['no sub', { sub: undefined }, 'sub', 'sub_mismatch', 'The token has no sub, or sub is not a non-empty string.'],
  ] as const)('refuses %s', async (_name, overrides, failing, reason, detail) => {
    const evaluation = await evaluate(token(claims(overrides)));
    expect(evaluation.reason).toBe(reason);
    expect(statuses(evaluation)).toEqual(refusedAt(failing));
    expect(step(evaluation, failing).detail).toBe(detail);
  });

  it('lets the condition decide the subject when the policy sets none', async () => {
    await setPolicy({ subject: null, condition: 'subject.startsWith("repo:acme/")' });
    const evaluation = await evaluate(token(claims({ sub: 'repo:acme/other:ref:refs/heads/dev' })));
    expect(evaluation.result).toBe('pass');
    expect(step(evaluation, 'sub').detail).toBe('The policy sets no exact subject; the token sub is "repo:acme/other:ref:refs/heads/dev".');
  });
});

describe('evaluateExchange: claim checks (docs/reference.md#federation-policies rules 3-5)', () => {
  beforeEach(() => setPolicy({ claimChecks: { scopes: 'deploy', tokenType: 'workload' } }));

  it('passes when scopes contains the value and token_type equals it', async () => {
    const evaluation = await evaluate(token(claims({ scopes: ['read', 'deploy'], token_type: 'workload' })));
    expect(evaluation.result).toBe('pass');
    expect(step(evaluation, 'claim_check:scopes').detail).toBe('The token scopes contain "deploy".');
  });

  it.each([
    ['no scopes claim', { token_type: 'workload' }, 'claim_check:scopes', 'The token has no scopes claim; the policy requires one containing "deploy".'],
    ['a space-separated scope string', { scopes: 'read deploy', token_type: 'workload' }, 'claim_check:scopes', 'The token scopes claim is a string (a space-separated scope is never consulted), not a list of strings.'],
    ['a scope differing in case', { scopes: ['Deploy'], token_type: 'workload' }, 'claim_check:scopes', 'The token scopes ("Deploy") do not contain "deploy" (case-sensitive).'],
    ['a list with a non-string', { scopes: ['deploy', 1], token_type: 'workload' }, 'claim_check:scopes', 'The token scopes claim is of type list (not all strings), not a list of strings.'],
    ['no token_type claim (a header typ does not count)', { scopes: ['deploy'] }, 'claim_check:token_type', 'The token has no token_type claim; the policy requires "workload".'],
    ['a token_type of the wrong type', { scopes: ['deploy'], token_type: ['workload'] }, 'claim_check:token_type', 'The token token_type claim is of type list (not all strings), not a string.'],
    ['another token_type', { scopes: ['deploy'], token_type: 'Workload' }, 'claim_check:token_type', 'The token token_type "Workload" does not equal "workload" (case-sensitive).'],
  ] as const)('refuses %s', async (_name, overrides, failing, detail) => {
    const evaluation = await evaluate(token(claims(overrides), { header: { typ: 'workload' } }));
    expect(evaluation.reason).toBe('claim_check_failed');
    expect(statuses(evaluation)).toEqual(refusedAt(failing));
    expect(step(evaluation, failing).detail).toBe(detail);
  });

  it('reports unconfigured checks as passed with a note', async () => {
    await setPolicy({ claimChecks: { scopes: null, tokenType: null } });
    const evaluation = await evaluate(token());
    expect(step(evaluation, 'claim_check:scopes')).toEqual({ name: 'claim_check:scopes', status: 'passed', detail: 'No scopes check is configured.' });
    expect(step(evaluation, 'claim_check:token_type').detail).toBe('No token type check is configured.');
    expect(step(evaluation, 'condition').detail).toBe('The policy has no condition.');
  });
});

describe('evaluateExchange: the condition (docs/reference.md#conditions)', () => {
  it('evaluates over the four variables, with absent scopes and token_type as empty values', async () => {
    await setPolicy({ condition: 'subject.endsWith("main") && audience.size() == 1 && scopes.size() == 0 && token_type == ""' });
    const evaluation = await evaluate(token());
    expect(evaluation.result).toBe('pass');
    expect(step(evaluation, 'condition').detail).toBe(`The condition is true for subject "${SUBJECT}", audience ["${AUDIENCE}"], scopes [], token_type "".`);
  });

  it('refuses a false condition as condition_false and says what it saw', async () => {
    await setPolicy({ condition: '"admin" in scopes' });
    const evaluation = await evaluate(token(claims({ scopes: ['read'], token_type: 'id' })));
    expect(evaluation.reason).toBe('condition_false');
    expect(statuses(evaluation)).toEqual(refusedAt('condition'));
    expect(step(evaluation, 'condition').detail).toBe(`The condition is false for subject "${SUBJECT}", audience ["${AUDIENCE}"], scopes ["read"], token_type "id".`);
  });

  it('refuses a condition that raises an error as condition_error', async () => {
    deps.evaluateCondition = () => {
      throw new Error('no such overload: string + int');
    };
    await setPolicy({ condition: 'subject + 1 == "x"' });
    const evaluation = await evaluate(token());
    expect(evaluation.reason).toBe('condition_error');
    expect(step(evaluation, 'condition').detail).toBe('The condition failed to evaluate: no such overload: string + int');
  });

  it('refuses a stored condition over the evaluation budget as condition_error, with the 64-value aud of the attack', async () => {
    // Saved before the budget existed: the store holds it, and the exchange must survive it.
    await setPolicy({ subject: null, condition: 'audience.map(a, subject)' + '.map(x, x + x)'.repeat(18) + '.exists(y, y.contains("zzz"))' });
    const sub = 'repo:acme/' + 'x'.repeat(502);
    const evaluation = await evaluate(token(claims({ sub, aud: [AUDIENCE, ...Array.from({ length: 63 }, (_, i) => `aud-${i}`)] })));
    expect(evaluation.reason).toBe('condition_error');
    expect(step(evaluation, 'condition').detail).toMatch(/too expensive/);
  });

  it('refuses a condition stopped by the wall-clock backstop as condition_error, and says so', async () => {
    await setPolicy({ subject: null, condition: 'audience.exists(a, a == "never") || subject == "' + SUBJECT + '"' });
    // A clock that jumps 100 ms whenever the meter looks: what a cost the model misses would look like.
    let now = 0;
    deps.evaluateCondition = (source, variables) => evaluateConditionMetered(source, variables, { now: () => (now += 100) }).result;
    const evaluation = await evaluate(token(claims({ aud: [AUDIENCE, ...Array.from({ length: 1000 }, (_, i) => `aud-${i}`)] })));
    expect(evaluation.reason).toBe('condition_error');
    expect(step(evaluation, 'condition').detail).toBe(`The condition failed to evaluate: the condition took longer than its evaluation time limit (${CONDITION_TIME_LIMIT_MS} ms)`);
  });

  it('refuses a condition that fails at run time (an index out of range) as condition_error', async () => {
    await setPolicy({ condition: 'scopes[3] == "deploy"' });
    const evaluation = await evaluate(token(claims({ scopes: ['deploy'] })));
    expect(evaluation.reason).toBe('condition_error');
    expect(step(evaluation, 'condition').detail).toMatch(/^The condition failed to evaluate: the condition failed: /);
  });

  it.each([
    ['scopes as a string', { scopes: 'deploy' }, 'The token scopes claim is of type string; the condition needs a list of strings.'],
    ['scopes with a number', { scopes: ['deploy', 3] }, 'The token scopes claim is of type list (not all strings); the condition needs a list of strings.'],
    ['token_type as a number', { token_type: 3 }, 'The token token_type claim is of type number; the condition needs a string.'],
    ['token_type as null', { token_type: null }, 'The token token_type claim is of type null; the condition needs a string.'],
  ])('refuses %s fed to the condition as condition_error, without evaluating it', async (_name, overrides, detail) => {
    const evaluateCondition = jest.fn(() => true);
    deps.evaluateCondition = evaluateCondition;
    await setPolicy({ condition: 'true' });
    const evaluation = await evaluate(token(claims(overrides)));
    expect(evaluation.reason).toBe('condition_error');
    expect(step(evaluation, 'condition').detail).toBe(detail);
    expect(evaluateCondition).not.toHaveBeenCalled();
  });

  it('ignores wrongly typed scopes when the policy has no condition and no scopes check', async () => {
    expect((await evaluate(token(claims({ scopes: 'deploy', token_type: 3 })))).result).toBe('pass');
  });
});
