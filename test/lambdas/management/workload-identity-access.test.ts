import { randomUUID } from 'node:crypto';
import { ISSUERS, POLICIES, useWorkloadIdentityAdmin } from '../../support/workload-identity-admin';

const ENTITLEMENT = 'Workload identity federation requires the Business or Enterprise plan';

describe('workload identity admin API on the local service', () => {
  const api = useWorkloadIdentityAdmin();
  const { organization, call, post, patch, remove, uniqueUrl, createIssuer, policyBody, createPolicy } = api;

  describe('access', () => {
    it('lets any management key read, and refuses writes with a read-only key', async () => {
      const readOnly = api.service.runtime.demo.keys.managementReadOnly;
      expect((await call(ISSUERS, { key: readOnly })).status).toBe(200);
      expect((await call(POLICIES, { key: readOnly })).status).toBe(200);
      for (const response of [
        await post(ISSUERS, { name: 'x', issuer_url: uniqueUrl() }, readOnly),
        await post(POLICIES, {}, readOnly),
        await patch(`${ISSUERS}/${randomUUID()}`, { name: 'x' }, readOnly),
        await remove(`${POLICIES}/${randomUUID()}`, readOnly),
      ]) {
        expect([response.status, response.body]).toEqual([403, { error: { code: 403, message: 'This management key is read-only' } }]);
      }
    });

    it('refuses workspace and personal keys with 403', async () => {
      for (const key of [api.service.runtime.demo.keys.workspace, api.service.runtime.demo.keys.personal]) {
        const response = await call(ISSUERS, { key });
        expect([response.status, response.body]).toEqual([403, { error: { code: 403, message: 'Operation reserved for management keys' } }]);
      }
    });

    it('refuses a request without a key with 401', async () => {
      const response = await api.service.call(POLICIES);
      expect([response.status, response.body]).toEqual([401, { error: { code: 401, message: 'Missing Authentication header' } }]);
    });

    it('answers a body that is not JSON with 400', async () => {
      const response = await post(ISSUERS, '{"name": ');
      expect([response.status, response.body]).toEqual([400, { error: { code: 400, message: 'Request body is not valid JSON' } }]);
    });
  });

  describe('entitlement (docs/reference.md#workload-identity)', () => {
    it.each(['free', 'pro'] as const)('refuses create on the %s plan with 403', async (plan) => {
      const org = await organization(plan);
      for (const [path, body] of [
        [ISSUERS, { name: 'IdP', issuer_url: uniqueUrl() }],
        [POLICIES, policyBody(randomUUID())],
      ] as const) {
        const response = await post(path, body, org.admin);
        expect([response.status, response.body]).toEqual([403, { error: { code: 403, message: ENTITLEMENT } }]);
      }
    });

    it('after a downgrade, lets the organization list, read and delete what it had, but not update it', async () => {
      const org = await organization('business');
      const issuer = await createIssuer({}, org.admin);
      const policy = await createPolicy(issuer.id, { api_key_hash: org.workspaceKeyHash }, org.admin);
      await api.stores.accounts.setPlan(org.id, 'pro');

      expect((await call(ISSUERS, { key: org.admin })).body).toEqual({ data: [issuer], total_count: 1 });
      expect((await call(`${POLICIES}/${policy.id}`, { key: org.admin })).body).toEqual({ data: policy });
      for (const response of [
        await patch(`${ISSUERS}/${issuer.id}`, { name: 'renamed' }, org.admin),
        await patch(`${POLICIES}/${policy.id}`, { enabled: false }, org.admin),
      ]) {
        expect([response.status, response.body]).toEqual([403, { error: { code: 403, message: ENTITLEMENT } }]);
      }
      expect((await remove(`${POLICIES}/${policy.id}`, org.admin)).body).toEqual({ deleted: true });
      expect((await remove(`${ISSUERS}/${issuer.id}`, org.admin)).body).toEqual({ deleted: true });
    });
  });
});
