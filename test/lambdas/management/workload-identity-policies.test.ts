import { randomUUID } from 'node:crypto';
import { hashApiKey } from '../../../lambdas/accounts/api-keys';
import { POLICIES, UUID, ISO, badRequest, useWorkloadIdentityAdmin } from '../../support/workload-identity-admin';

describe('workload identity admin API on the local service', () => {
  const api = useWorkloadIdentityAdmin();
  const { organization, call, post, patch, remove, createIssuer, policyBody, createPolicy } = api;

  describe('policies', () => {
    let issuer: { id: string; issuer_url: string };
    beforeAll(async () => {
      issuer = await createIssuer({ name: 'Cluster' });
    });

    it('creates a policy (201) with a service-generated UUID, enabled, without claim checks, scope from the key', async () => {
      const response = await post(POLICIES, policyBody(issuer.id));
      expect(response.status).toBe(201);
      expect(response.body).toEqual({
        data: {
          id: expect.stringMatching(UUID),
          name: 'Deploy',
          issuer_id: issuer.id,
          subject: 'system:serviceaccount:ci:runner',
          audience: 'https://modelgate.example',
          condition: null,
          api_key_hash: api.workspaceKeyHash,
          scope: 'inference',
          enabled: true,
          claim_checks: { scopes: null, token_type: null },
          require_dpop: false,
          created_at: expect.stringMatching(ISO),
          updated_at: null,
        },
      });
      expect((await call(`${POLICIES}/${response.body.data.id}`)).body).toEqual(response.body);
    });

    it('derives scope management from a management key, and ignores nothing it is given', async () => {
      const policy = await createPolicy(issuer.id, {
        api_key_hash: api.managementKeyHash,
        subject: null,
        condition: 'subject.startsWith("system:serviceaccount:ops:")',
        enabled: false,
        claim_checks: { scopes: 'admin', token_type: 'id_token' },
        require_dpop: true,
      });
      expect(policy).toMatchObject({
        require_dpop: true,
        scope: 'management',
        subject: null,
        condition: 'subject.startsWith("system:serviceaccount:ops:")',
        enabled: false,
        claim_checks: { scopes: 'admin', token_type: 'id_token' },
      });
    });

    it('lists policies, narrowed by ?issuer_id=', async () => {
      const other = await createIssuer();
      const mine = await createPolicy(other.id);
      const narrowed = await call(`${POLICIES}?issuer_id=${other.id}`);
      expect(narrowed.body).toEqual({ data: [mine], total_count: 1 });
      const all = await call(POLICIES);
      expect(all.body.total_count).toBe(all.body.data.length);
      expect(all.body.data.length).toBeGreaterThan(1);
      const bad = await call(`${POLICIES}?issuer_id=nope`);
      expect([bad.status, bad.body]).toEqual([400, badRequest('Invalid issuer_id: must be a lowercase UUID', 'issuer_id')]);
    });

    it.each([
      ['neither subject nor condition (rule 1)', { subject: null }, 'Invalid subject: a policy needs a subject or a condition, or both', 'subject'],
      ['no audience', { audience: undefined }, 'Invalid audience: is required', 'audience'],
      ['an audience of 513 characters', { audience: 'a'.repeat(513) }, 'Invalid audience: must be at most 512 characters', 'audience'],
      ['a subject of 513 characters', { subject: 's'.repeat(513) }, 'Invalid subject: must be at most 512 characters', 'subject'],
      ['no name', { name: undefined }, 'Invalid name: is required', 'name'],
      ['no issuer_id', { issuer_id: undefined }, 'Invalid issuer_id: is required', 'issuer_id'],
      ['an unknown issuer', { issuer_id: randomUUID() }, 'Invalid issuer_id: no issuer with this id in the organization', 'issuer_id'],
      ['an issuer_id that is not a UUID', { issuer_id: 'github' }, 'Invalid issuer_id: no issuer with this id in the organization', 'issuer_id'],
      ['no api_key_hash', { api_key_hash: undefined }, 'Invalid api_key_hash: is required', 'api_key_hash'],
      [
        'the key itself instead of its hash',
        { api_key_hash: 'sk-mg-v1-0123' },
        "Invalid api_key_hash: must be a key's hash as GET /keys lists it (64 lowercase hex digits), not the key itself",
        'api_key_hash',
      ],
      ['an unknown key', { api_key_hash: 'f'.repeat(64) }, 'Invalid api_key_hash: no key with this hash in the organization', 'api_key_hash'],
      ['scope, which is derived', { scope: 'management' }, 'Invalid scope: is set by the service and read-only', 'scope'],
      ['an unknown field', { subjects: ['a'] }, 'Invalid subjects: is not a known field', 'subjects'],
      ['enabled that is not a boolean', { enabled: 'yes' }, 'Invalid enabled: must be true or false', 'enabled'],
      ['an unknown claim check', { claim_checks: { groups: 'x' } }, 'Invalid claim_checks: has no check "groups" (the checks are scopes and token_type)', 'claim_checks'],
      ['an empty claim check value', { claim_checks: { scopes: '' } }, 'Invalid claim_checks.scopes: must be a non-empty string or null', 'claim_checks.scopes'],
      [
        'a claim check value of 513 characters',
        { claim_checks: { token_type: 't'.repeat(513) } },
        'Invalid claim_checks.token_type: must be at most 512 characters',
        'claim_checks.token_type',
      ],
      ['a condition with an unknown variable', { condition: 'claims.sub == "x"' }, 'Invalid condition: unknown variable claims', 'condition'],
      ['a condition using matches()', { condition: 'subject.matches("^repo:acme/")' }, 'Invalid condition: matches() is not available', 'condition'],
      ['a condition yielding a string', { condition: 'subject' }, 'Invalid condition: the condition must yield a bool, not string', 'condition'],
      ['a nested comprehension', { condition: 'audience.all(a, scopes.exists(s, s == a))' }, 'Invalid condition: nested comprehension', 'condition'],
      ['a condition over 2,000 characters', { condition: `subject == "${'x'.repeat(1990)}"` }, 'Invalid condition: the condition is longer than 2000 characters', 'condition'],
      ['a condition that is not a string', { condition: true }, 'Invalid condition: must be a CEL expression (a string) or null', 'condition'],
    ])('refuses %s with 400', async (_name, body, message, parameter) => {
      const response = await post(POLICIES, policyBody(issuer.id, body));
      expect([response.status, response.body]).toEqual([400, badRequest(message, parameter)]);
    });

    it('refuses a personal key, a disabled key, a deleted key and another organization’s key', async () => {
      const demo = api.service.runtime.demo;
      const disabled = await api.stores.accounts.createApiKey(demo.organizationId, { kind: 'workspace', name: 'Disabled' });
      await api.stores.accounts.updateApiKey(demo.organizationId, disabled.key.hash, { disabled: true });
      const deleted = await api.stores.accounts.createApiKey(demo.organizationId, { kind: 'workspace', name: 'Deleted' });
      await api.stores.accounts.deleteApiKey(demo.organizationId, deleted.key.hash);
      const other = await organization('enterprise');
      for (const [hash, reason] of [
        [hashApiKey(demo.keys.personal), 'is a personal key: a policy acts as a workspace or management key'],
        [disabled.key.hash, 'the key is disabled'],
        [deleted.key.hash, 'no key with this hash in the organization'],
        [other.workspaceKeyHash, 'no key with this hash in the organization'],
      ]) {
        const response = await post(POLICIES, policyBody(issuer.id, { api_key_hash: hash }));
        expect([response.status, response.body]).toEqual([400, badRequest(`Invalid api_key_hash: ${reason}`, 'api_key_hash')]);
      }
    });

    it('refuses another organization’s issuer as issuer_id', async () => {
      const other = await organization('enterprise');
      const theirs = await createIssuer({}, other.admin);
      const response = await post(POLICIES, policyBody(theirs.id));
      expect([response.status, response.body]).toEqual([
        400,
        badRequest('Invalid issuer_id: no issuer with this id in the organization', 'issuer_id'),
      ]);
    });

    it('pauses with {"enabled": false} and enables with true', async () => {
      const policy = await createPolicy(issuer.id);
      const paused = await patch(`${POLICIES}/${policy.id}`, { enabled: false });
      expect(paused.body.data).toEqual({ ...policy, enabled: false, updated_at: expect.stringMatching(ISO) });
      expect((await call(`${POLICIES}/${policy.id}`)).body.data.enabled).toBe(false);
      expect((await patch(`${POLICIES}/${policy.id}`, { enabled: true })).body.data.enabled).toBe(true);
    });

    it('removes one claim check with null and leaves the other (rule 3)', async () => {
      const policy = await createPolicy(issuer.id, { claim_checks: { scopes: 'deploy', token_type: 'id_token' } });
      const updated = await patch(`${POLICIES}/${policy.id}`, { claim_checks: { scopes: null } });
      expect(updated.body.data.claim_checks).toEqual({ scopes: null, token_type: 'id_token' });
      const added = await patch(`${POLICIES}/${policy.id}`, { claim_checks: { scopes: 'read' } });
      expect(added.body.data.claim_checks).toEqual({ scopes: 'read', token_type: 'id_token' });
    });

    it('moves a policy to another issuer of the organization, and not to an unknown one', async () => {
      const policy = await createPolicy(issuer.id);
      const other = await createIssuer();
      const moved = await patch(`${POLICIES}/${policy.id}`, { issuer_id: other.id });
      expect(moved.body.data).toMatchObject({ id: policy.id, issuer_id: other.id });
      expect((await call(`${POLICIES}?issuer_id=${other.id}`)).body.data.map((p: { id: string }) => p.id)).toEqual([policy.id]);
      const unknown = await patch(`${POLICIES}/${policy.id}`, { issuer_id: randomUUID() });
      expect([unknown.status, unknown.body]).toEqual([
        400,
        badRequest('Invalid issuer_id: no issuer with this id in the organization', 'issuer_id'),
      ]);
    });

    it('re-derives the scope when the acting key changes', async () => {
      const policy = await createPolicy(issuer.id);
      const updated = await patch(`${POLICIES}/${policy.id}`, { api_key_hash: api.managementKeyHash });
      expect(updated.body.data).toMatchObject({ api_key_hash: api.managementKeyHash, scope: 'management' });
    });

    it('refuses rule 1 on update, and a read-only scope', async () => {
      const policy = await createPolicy(issuer.id);
      const noSubject = await patch(`${POLICIES}/${policy.id}`, { subject: null });
      expect([noSubject.status, noSubject.body]).toEqual([400, badRequest('Invalid subject: a policy needs a subject or a condition, or both', 'subject')]);
      const scope = await patch(`${POLICIES}/${policy.id}`, { scope: 'management' });
      expect([scope.status, scope.body]).toEqual([400, badRequest('Invalid scope: is set by the service and read-only', 'scope')]);
      const bad = await patch(`${POLICIES}/${policy.id}`, { condition: 'size(scopes)' });
      expect([bad.status, bad.body]).toEqual([400, badRequest('Invalid condition: the condition must yield a bool, not int', 'condition')]);
      expect((await call(`${POLICIES}/${policy.id}`)).body.data).toEqual(policy);
    });

    it('loses none of several concurrent updates of different fields', async () => {
      const policy = await createPolicy(issuer.id);
      const responses = await Promise.all([
        patch(`${POLICIES}/${policy.id}`, { name: 'Concurrent' }),
        patch(`${POLICIES}/${policy.id}`, { enabled: false }),
        patch(`${POLICIES}/${policy.id}`, { claim_checks: { scopes: 'deploy' } }),
        patch(`${POLICIES}/${policy.id}`, { claim_checks: { token_type: 'id_token' } }),
        patch(`${POLICIES}/${policy.id}`, { audience: 'sts.example' }),
        patch(`${POLICIES}/${policy.id}`, { condition: 'token_type != "refresh"' }),
      ]);
      expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
      expect((await call(`${POLICIES}/${policy.id}`)).body.data).toMatchObject({
        name: 'Concurrent',
        enabled: false,
        claim_checks: { scopes: 'deploy', token_type: 'id_token' },
        audience: 'sts.example',
        condition: 'token_type != "refresh"',
      });
    });

    it('deletes a policy: {"deleted": true}, then 404', async () => {
      const policy = await createPolicy(issuer.id);
      expect(await remove(`${POLICIES}/${policy.id}`)).toMatchObject({ status: 200, body: { deleted: true } });
      expect((await call(`${POLICIES}/${policy.id}`)).status).toBe(404);
      expect((await remove(`${POLICIES}/${policy.id}`)).status).toBe(404);
    });

    it('answers 404 for an unknown id, an id that is not a UUID, and another organization’s policy', async () => {
      const other = await organization('enterprise');
      const theirIssuer = await createIssuer({}, other.admin);
      const theirs = await createPolicy(theirIssuer.id, { api_key_hash: other.workspaceKeyHash }, other.admin);
      for (const [id, message] of [
        [randomUUID(), 'Policy <id> not found'],
        [theirs.id, 'Policy <id> not found'],
        ['nope', 'Policy not found'],
      ]) {
        for (const response of [await call(`${POLICIES}/${id}`), await patch(`${POLICIES}/${id}`, { enabled: false }), await remove(`${POLICIES}/${id}`)]) {
          expect([response.status, response.body]).toEqual([404, { error: { code: 404, message: message!.replace('<id>', id!) } }]);
        }
      }
      expect((await call(`${POLICIES}/${theirs.id}`, { key: other.admin })).body.data).toEqual(theirs);
    });
  });
});
