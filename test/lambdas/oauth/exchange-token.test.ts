import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compactVerify, decodeProtectedHeader, importJWK, jwtVerify } from 'jose';
import type { ExchangeEvaluation } from '../../../lambdas/federation/exchange-types';
import { DpopChecker } from '../../../lambdas/credentials/dpop-binding';
import type { OAuthError } from '../../../lambdas/oauth/oauth-errors';
import { exchangeToken, INVALID_GRANT_DESCRIPTION, type TokenExchangeDeps } from '../../../lambdas/oauth/exchange-token';
import { LocalSigner } from '../../../lambdas/signing/local-signer';
import type { Signer } from '../../../lambdas/signing/signer';
import { MemoryExchangeEventStore } from '../../support/memory-exchange-event-store';
import { MemoryJtiStore } from '../../support/memory-jti-store';
import { MemoryProofReplayStore } from '../../support/memory-proof-replay-store';
import { MemoryRateCounterStore } from '../../support/memory-rate-counter-store';
import { failingEvaluation, ISSUER_ID, issuerFixture, KEY_HASH, ORG_ID, passingEvaluation, POLICY_ID, policyFixture } from '../../support/exchange-fixtures';
import { proofKey, signProof, type ProofKey } from '../../support/dpop';
import { FixedClock } from '../../support/fixed-clock';

const ISSUER = 'https://api.modelgate.example/api/v1';
const NOW = new Date('2026-11-21T12:00:30Z');
const NOW_S = NOW.getTime() / 1000;
const SUBJECT_TOKEN = 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ3b3JrbG9hZCJ9.c2lnbmF0dXJl';

const form = (fields: Record<string, string> = {}) =>
  new URLSearchParams({
    grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
    subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
    subject_token: SUBJECT_TOKEN,
    federation_policy_id: POLICY_ID,
    ...fields,
  }).toString();

let signer: LocalSigner;
beforeAll(async () => {
  signer = await LocalSigner.fromFile(join(mkdtempSync(join(tmpdir(), 'exchange-')), 'key.pem'));
});

interface Harness {
  deps: TokenExchangeDeps;
  events: MemoryExchangeEventStore;
  evaluations: { subjectToken: string; policyId: string }[];
  errors: unknown[];
  clock: FixedClock;
  run(body?: string, sourceIp?: string, proofs?: readonly string[]): Promise<Awaited<ReturnType<typeof exchangeToken>>>;
}

function harness(evaluation: ExchangeEvaluation, overrides: Partial<TokenExchangeDeps> = {}): Harness {
  const events = new MemoryExchangeEventStore();
  const evaluations: Harness['evaluations'] = [];
  const errors: unknown[] = [];
  const clock = new FixedClock(NOW);
  let id = 0;
  const deps: TokenExchangeDeps = {
    config: { issuer: ISSUER, maxLifetimeSeconds: 900, rateLimit: { limit: 60, windowSeconds: 60 } },
    clock,
    newId: () => `id-${++id}`,
    rateCounters: new MemoryRateCounterStore(),
    // As evaluateExchange does: nothing is evaluated before the request is admitted.
    evaluate: async ({ admitted, onPolicyRead, ...request }) => {
      await admitted;
      onPolicyRead?.();
      evaluations.push(request);
      return structuredClone(evaluation);
    },
    jtis: new MemoryJtiStore(),
    proofs: new DpopChecker({ apiBaseUrl: ISSUER, servedHostnames: [], replays: new MemoryProofReplayStore(), clock }),
    events,
    signer: async () => signer,
    logger: { error: (message, fields) => errors.push({ message, ...fields }) },
    ...overrides,
  };
  let request = 0;
  return {
    deps,
    events,
    evaluations,
    errors,
    clock,
    run: (body = form(), sourceIp = '203.0.113.7', proofs = []) =>
      exchangeToken(deps, {
        body,
        contentType: 'application/x-www-form-urlencoded',
        sourceIp,
        requestId: `req-${++request}`,
        proofs,
        method: 'POST',
        path: '/api/v1/oauth/token',
        stageUrl: undefined,
        host: undefined,
      }),
  };
}

async function refusal(promise: Promise<unknown>): Promise<OAuthError> {
  try {
    await promise;
  } catch (error) {
    return error as OAuthError;
  }
  throw new Error('expected a refusal');
}

describe('exchangeToken', () => {
  it('issues an ES256 at+jwt with the docs/reference.md#the-token-exchange body and records the issued event', async () => {
    const h = harness(passingEvaluation({ exp: NOW_S + 3600, jti: 'subject-jti' }));
    const body = await h.run();

    expect(body).toEqual({
      access_token: expect.any(String),
      issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      token_type: 'Bearer',
      expires_in: 900,
      scope: 'inference',
    });
    expect(Object.keys(body)).toEqual(['access_token', 'issued_token_type', 'token_type', 'expires_in', 'scope']);
    expect(decodeProtectedHeader(body.access_token)).toEqual({ alg: 'ES256', typ: 'at+jwt', kid: signer.kid });
    const { payload } = await jwtVerify(body.access_token, await importJWK(signer.publicJwk, 'ES256'), {
      issuer: ISSUER,
      audience: ISSUER,
      typ: 'at+jwt',
      currentDate: NOW,
    });
    expect(payload).toEqual({
      iss: ISSUER,
      aud: ISSUER,
      sub: 'repo:acme/app:ref:refs/heads/main',
      exp: NOW_S + 900,
      iat: NOW_S,
      jti: 'id-1',
      client_id: POLICY_ID,
      scope: 'inference',
      federation_policy_id: POLICY_ID,
      federation_issuer_id: ISSUER_ID,
      api_key_hash: KEY_HASH,
    });
    expect(h.evaluations).toEqual([{ subjectToken: SUBJECT_TOKEN, policyId: POLICY_ID }]);
    expect(h.events.events).toEqual([
      {
        id: 'id-2',
        organizationId: ORG_ID,
        time: NOW.toISOString(),
        policyId: POLICY_ID,
        issuerId: ISSUER_ID,
        outcome: 'issued',
        reason: null,
        subject: 'repo:acme/app:ref:refs/heads/main',
        subjectVerified: true,
        sourceIp: '203.0.113.7',
        requestId: 'req-1',
        tokenJti: 'id-1',
        dpopJkt: null,
        expiresAt: NOW_S + 30 * 86_400,
      },
    ]);
  });

  it('never lets the access token outlive the subject token: expires_in is exactly exp - now', async () => {
    const h = harness(passingEvaluation({ exp: NOW_S + 123 }));
    const body = await h.run();
    expect(body.expires_in).toBe(123);
    const { payload } = await compactVerify(body.access_token, await importJWK(signer.publicJwk, 'ES256'));
    expect(JSON.parse(Buffer.from(payload).toString()).exp).toBe(NOW_S + 123);
  });

  it('grants a management policy the management scope, and accepts a sent scope equal to it', async () => {
    const h = harness(passingEvaluation({ exp: NOW_S + 3600 }, { policy: policyFixture({ scope: 'management' }) }));
    expect((await h.run(form({ scope: 'management' }))).scope).toBe('management');
  });

  it('answers invalid_scope for a sent scope the policy does not grant, and records scope_mismatch', async () => {
    const h = harness(passingEvaluation({ exp: NOW_S + 3600 }));
    const error = await refusal(h.run(form({ scope: 'management' })));
    expect([error.status, error.code, error.description]).toEqual([400, 'invalid_scope', 'scope must be the scope the policy grants']);
    expect(h.events.events.map((e) => [e.outcome, e.reason, e.tokenJti])).toEqual([['refused', 'scope_mismatch', null]]);
  });

  it.each(['bad_signature', 'policy_paused', 'condition_false', 'aud_mismatch', 'claim_too_large'] as const)(
    'answers the one generic invalid_grant for %s and records the true reason',
    async (reason) => {
      const h = harness(failingEvaluation(reason));
      const error = await refusal(h.run());
      expect([error.status, error.code, error.description]).toEqual([400, 'invalid_grant', INVALID_GRANT_DESCRIPTION]);
      expect(h.events.events).toEqual([
        expect.objectContaining({ outcome: 'refused', reason, subject: 'repo:acme/app:ref:refs/heads/main', subjectVerified: false, requestId: 'req-1' }),
      ]);
    },
  );

  it('records nothing when the policy id names no policy: there is no organization to tell', async () => {
    const h = harness(failingEvaluation('policy_not_found', { policy: null }));
    const error = await refusal(h.run());
    expect(error.code).toBe('invalid_grant');
    expect(h.events.events).toEqual([]);
  });

  it('answers 503 temporarily_unavailable when the issuer keys cannot be fetched, and records it', async () => {
    const h = harness(failingEvaluation('keys_unavailable'));
    const error = await refusal(h.run());
    expect([error.status, error.code, error.headers]).toEqual([503, 'temporarily_unavailable', { 'Retry-After': '5' }]);
    expect(h.events.events.map((e) => e.reason)).toEqual(['keys_unavailable']);
  });

  it('checks the per-address limit first: past it, 429 with Retry-After to the end of the window, nothing evaluated', async () => {
    const h = harness(passingEvaluation({ exp: NOW_S + 3600 }), {
      config: { issuer: ISSUER, maxLifetimeSeconds: 900, rateLimit: { limit: 2, windowSeconds: 60 } },
    });
    await h.run();
    await expect(h.run('garbage')).rejects.toMatchObject({ code: 'invalid_request' });
    const error = await refusal(h.run());
    expect([error.status, error.code, error.description, error.headers]).toEqual([
      429,
      'invalid_request',
      'Too many token requests from this address',
      { 'Retry-After': '30' },
    ]);
    expect(h.evaluations).toHaveLength(1);
    // Another address has its own counter; the next window starts afresh.
    await expect(h.run(form(), '198.51.100.1')).resolves.toMatchObject({ token_type: 'Bearer' });
    h.clock.advance(30_000);
    await expect(h.run()).resolves.toMatchObject({ token_type: 'Bearer' });
  });

  it('fails closed when the limiter store cannot answer: 503, nothing evaluated', async () => {
    const h = harness(passingEvaluation({ exp: NOW_S + 3600 }), {
      rateCounters: { incrementBelow: async () => Promise.reject(new Error('ProvisionedThroughputExceededException')) },
    });
    const error = await refusal(h.run());
    expect([error.status, error.code, error.headers]).toEqual([503, 'temporarily_unavailable', { 'Retry-After': '1' }]);
    expect(h.evaluations).toEqual([]);
    expect(h.errors).toEqual([expect.objectContaining({ message: 'exchange rate limiter unavailable', requestId: 'req-1' })]);
  });

  describe('with check_jti on the issuer', () => {
    const evaluation = (jti: string | null, issuerId = ISSUER_ID) =>
      passingEvaluation(
        { exp: NOW_S + 600, jti },
        { issuer: issuerFixture({ id: issuerId, checkJti: true }), policy: policyFixture({ issuerId }) },
      );

    it('refuses a jti seen before for that issuer as replayed, and one without jti', async () => {
      const h = harness(evaluation('jti-1'));
      await h.run();
      await expect(h.run()).rejects.toMatchObject({ code: 'invalid_grant', description: INVALID_GRANT_DESCRIPTION });
      const other = harness(evaluation(null), { jtis: h.deps.jtis, events: h.events });
      await expect(other.run()).rejects.toMatchObject({ code: 'invalid_grant' });
      expect(h.events.events.map((e) => [e.outcome, e.reason])).toEqual([
        ['issued', null],
        ['refused', 'replayed'],
        ['refused', 'replayed'],
      ]);
    });

    it('keeps issuers apart: the same jti from another issuer is fresh', async () => {
      const h = harness(evaluation('jti-1'));
      await h.run();
      const other = harness(evaluation('jti-1', 'c0ffee00-0000-4000-8000-000000000000'), { jtis: h.deps.jtis });
      await expect(other.run()).resolves.toMatchObject({ token_type: 'Bearer' });
    });

    it('gives the jti back when no token could be issued, so the workload can retry', async () => {
      let failing = true;
      const flaky: Signer = { kid: 'k', sign: async (input) => (failing ? Promise.reject(new Error('KMS throttled')) : signer.sign(input)) };
      const h = harness(evaluation('jti-1'), { signer: async () => flaky });
      const error = await refusal(h.run());
      expect([error.status, error.code]).toEqual([503, 'temporarily_unavailable']);
      failing = false;
      await expect(h.run()).resolves.toMatchObject({ token_type: 'Bearer' });
      // The event written beside the failed signature was rewritten: nothing was issued.
      expect(h.events.events.map((e) => [e.outcome, e.reason, e.tokenJti === null])).toEqual([
        ['refused', 'issuance_failed', true],
        ['issued', null, false],
      ]);
    });

    it('rewrites the event written beside a replayed claim, so the record never says issued', async () => {
      const h = harness(evaluation('jti-2'));
      await h.run();
      await expect(h.run()).rejects.toMatchObject({ code: 'invalid_grant' });
      expect(h.events.events).toHaveLength(2);
      expect(h.events.events[1]).toMatchObject({ outcome: 'refused', reason: 'replayed', tokenJti: null });
    });
  });

  it('withholds the token when its event cannot be recorded', async () => {
    const h = harness(passingEvaluation({ exp: NOW_S + 3600 }), {
      events: { record: async () => Promise.reject(new Error('throttled')), list: async () => ({ events: [], nextCursor: null }) },
    });
    const error = await refusal(h.run());
    expect([error.status, error.code, error.description]).toEqual([503, 'temporarily_unavailable', 'The access token could not be issued; retry shortly']);
  });

  it('still refuses when the refusal event cannot be recorded, and logs what it would have said', async () => {
    const h = harness(failingEvaluation('sub_mismatch'), {
      events: { record: async () => Promise.reject(new Error('throttled')), list: async () => ({ events: [], nextCursor: null }) },
    });
    await expect(h.run()).rejects.toMatchObject({ status: 400, code: 'invalid_grant' });
    expect(h.errors).toEqual([expect.objectContaining({ message: 'exchange event not recorded', reason: 'sub_mismatch', policyId: POLICY_ID })]);
  });

  it('refuses a subject token that expires this very second rather than issue a dead token', async () => {
    const h = harness(passingEvaluation({ exp: NOW_S }));
    await expect(h.run()).rejects.toMatchObject({ code: 'invalid_grant' });
    expect(h.events.events.map((e) => e.reason)).toEqual(['expired']);
  });

  it('keeps credentials out of events: no subject token, access token or signature', async () => {
    const h = harness(passingEvaluation({ exp: NOW_S + 3600 }));
    const { access_token } = await h.run();
    const recorded = JSON.stringify(h.events.events);
    for (const part of [...SUBJECT_TOKEN.split('.'), ...access_token.split('.')]) expect(recorded).not.toContain(part);
  });
});

describe('exchangeToken with DPoP (RFC 9449 §5)', () => {
  const TOKEN_URL = `${ISSUER}/oauth/token`;
  let key: ProofKey;
  beforeAll(async () => {
    key = await proofKey();
  });
  const proof = (options: Parameters<typeof signProof>[1] = {}) => signProof(key, { htu: TOKEN_URL, iat: NOW_S, ...options });
  const bound = (claims: object = {}) => passingEvaluation({ exp: NOW_S + 3600, ...claims }, { policy: policyFixture({ requireDpop: true }) });

  it('binds the token to the proof key: token_type DPoP, cnf.jkt, and the thumbprint in the event', async () => {
    const h = harness(passingEvaluation({ exp: NOW_S + 3600 }));
    const body = await h.run(form(), undefined, [await proof()]);
    expect(body).toMatchObject({ token_type: 'DPoP', expires_in: 900 });
    const { payload } = await jwtVerify(body.access_token, await importJWK(signer.publicJwk, 'ES256'), { currentDate: NOW });
    expect(payload.cnf).toEqual({ jkt: key.jkt });
    expect(h.events.events).toEqual([expect.objectContaining({ outcome: 'issued', dpopJkt: key.jkt })]);
  });

  it('issues a Bearer token without a proof, unless the policy requires one', async () => {
    await expect(harness(passingEvaluation({ exp: NOW_S + 3600 })).run()).resolves.toMatchObject({ token_type: 'Bearer' });
    const h = harness(bound());
    const error = await refusal(h.run());
    expect([error.status, error.code]).toEqual([400, 'invalid_dpop_proof']);
    expect(error.description).toMatch(/DPoP-bound tokens only/);
    expect(h.events.events.map((e) => [e.outcome, e.reason, e.dpopJkt])).toEqual([['refused', 'dpop_proof_required', null]]);
    await expect(harness(bound()).run(form(), undefined, [await proof()])).resolves.toMatchObject({ token_type: 'DPoP' });
  });

  it('tells nothing of the requirement to a token the policy refuses', async () => {
    const h = harness(failingEvaluation('sub_mismatch', { policy: policyFixture({ requireDpop: true }) }));
    await expect(h.run()).rejects.toMatchObject({ code: 'invalid_grant', description: INVALID_GRANT_DESCRIPTION });
  });

  it('refuses an invalid proof whatever the policy says, and records why', async () => {
    const h = harness(passingEvaluation({ exp: NOW_S + 3600 }));
    const error = await refusal(h.run(form(), undefined, [await proof({ htm: 'GET' })]));
    expect([error.status, error.code, error.description]).toEqual([400, 'invalid_dpop_proof', 'The DPoP proof htm must be the request method, POST']);
    expect(h.events.events.map((e) => [e.outcome, e.reason])).toEqual([['refused', 'dpop_proof_invalid']]);
    // Even before the subject token is looked at: an invalid proof says nothing about the policy.
    const failing = harness(failingEvaluation('bad_signature'));
    await expect(failing.run(form(), undefined, [await proof({ iat: NOW_S - 3600 })])).rejects.toMatchObject({ code: 'invalid_dpop_proof' });
  });

  it('issues nothing when the replay store cannot answer: 503 with Retry-After, logged', async () => {
    const h = harness(passingEvaluation({ exp: NOW_S + 3600 }), {
      proofs: new DpopChecker({ apiBaseUrl: ISSUER, servedHostnames: [], replays: { claim: async () => Promise.reject(new Error('throttled')) }, clock: new FixedClock(NOW) }),
    });
    const error = await refusal(h.run(form(), undefined, [await proof()]));
    expect([error.status, error.code, error.headers['Retry-After']]).toEqual([503, 'temporarily_unavailable', '1']);
    expect(h.errors).toEqual([expect.objectContaining({ message: 'DPoP proof replay store unavailable', error: 'Error' })]);
  });

  it('claims the proof as the reads after the policy start, whichever of the first stage answers last', async () => {
    const seen: string[] = [];
    const replays = new MemoryProofReplayStore();
    const h = harness(passingEvaluation({ exp: NOW_S + 3600 }), {
      proofs: new DpopChecker({ apiBaseUrl: ISSUER, servedHostnames: [], clock: new FixedClock(NOW), replays: { claim: (...args) => (seen.push('claim'), replays.claim(...args)) } }),
      // The policy read answers after 60 ms, the reads after it 60 ms later.
      evaluate: async ({ admitted, onPolicyRead }) => {
        await Promise.all([admitted, new Promise((resolve) => setTimeout(resolve, 60))]);
        onPolicyRead?.();
        seen.push('issuer, organization and key reads');
        await new Promise((resolve) => setTimeout(resolve, 60));
        return passingEvaluation({ exp: NOW_S + 3600 });
      },
    });
    const issuing = h.run(form(), undefined, [await proof()]);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(seen).toEqual([]);
    await expect(issuing).resolves.toMatchObject({ token_type: 'DPoP' });
    expect(seen).toEqual(['issuer, organization and key reads', 'claim']);
  });

  it('takes a proof once: a replayed proof is refused and recorded', async () => {
    const h = harness(passingEvaluation({ exp: NOW_S + 3600 }));
    const once = await proof();
    await expect(h.run(form(), undefined, [once])).resolves.toMatchObject({ token_type: 'DPoP' });
    const error = await refusal(h.run(form(), undefined, [once]));
    expect([error.code, error.description]).toEqual(['invalid_dpop_proof', 'The DPoP proof was used before: sign a new proof for every request']);
    expect(h.events.events.map((e) => [e.outcome, e.reason, e.dpopJkt])).toEqual([
      ['issued', null, key.jkt],
      ['refused', 'dpop_proof_replayed', key.jkt],
    ]);
  });
});
