import type { ExchangeEvent } from '../../../lambdas/federation/exchange-events';
import { DynamoExchangeEventStore } from '../../../lambdas/aws/dynamo-exchange-event-store';
import { TABLE_SCHEMAS } from '../../../lambdas/aws/table-schemas';
import { connectToRuntime, type RuntimeStores } from '../../support/accounts';
import { ISSUER_ID, POLICY_ID } from '../../support/exchange-fixtures';
import { startTestService, type TestService } from '../../support/local-service';

describe('GET /workload-identity/events on the local service', () => {
  let service: TestService;
  let stores: RuntimeStores;
  let keys: TestService['runtime']['demo']['keys'];
  const OTHER_POLICY = '0b1c2d3e-4f50-4a6b-8c7d-8e9fa0b1c2d3';
  const BASE = Date.now();

  const event = (i: number, overrides: Partial<ExchangeEvent> = {}): ExchangeEvent => ({
    id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    organizationId: service.runtime.demo.organizationId,
    time: new Date(BASE - (10 - i) * 1000).toISOString(),
    policyId: i % 2 === 0 ? POLICY_ID : OTHER_POLICY,
    issuerId: ISSUER_ID,
    outcome: i === 5 ? 'issued' : 'refused',
    reason: i === 5 ? null : 'aud_mismatch',
    subject: 'system:serviceaccount:ci:runner',
    subjectVerified: i === 5,
    sourceIp: '192.0.2.44',
    requestId: `req-${i}`,
    tokenJti: i === 5 ? 'jti-5' : null,
    dpopJkt: null,
    expiresAt: Math.floor(BASE / 1000) + 86_400,
    ...overrides,
  });

  beforeAll(async () => {
    service = await startTestService();
    keys = service.runtime.demo.keys;
    stores = connectToRuntime(service.runtime);
    const events = new DynamoExchangeEventStore(stores.documentClient, TABLE_SCHEMAS.policies.localName);
    for (let i = 1; i <= 5; i++) await events.record(event(i));
    await events.record(event(6, { organizationId: 'another-organization' }));
  });
  afterAll(async () => {
    stores.destroy();
    await service.stop();
  });

  it('lists the organization’s events newest first with the true reasons, for any management key', async () => {
    const response = await service.call('/workload-identity/events?limit=2', { key: keys.managementReadOnly });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      data: [
        {
          id: '00000000-0000-4000-8000-000000000005',
          time: event(5).time,
          policy_id: OTHER_POLICY,
          issuer_id: ISSUER_ID,
          outcome: 'issued',
          reason: null,
          subject: 'system:serviceaccount:ci:runner',
          subject_verified: true,
          source_ip: '192.0.2.44',
          request_id: 'req-5',
          token_jti: 'jti-5',
          dpop_jkt: null,
        },
        expect.objectContaining({ request_id: 'req-4', outcome: 'refused', reason: 'aud_mismatch', subject_verified: false }),
      ],
      next_cursor: expect.any(String),
    });
    const rest = await service.call(`/workload-identity/events?limit=2&cursor=${response.body.next_cursor}`, { key: keys.managementReadOnly });
    const last = await service.call(`/workload-identity/events?limit=2&cursor=${rest.body.next_cursor}`, { key: keys.managementReadOnly });
    expect([...rest.body.data, ...last.body.data].map((e: { request_id: string }) => e.request_id)).toEqual(['req-3', 'req-2', 'req-1']);
    expect(last.body.next_cursor).toBeNull();
  });

  it("narrows to one policy's events with policy_id", async () => {
    const response = await service.call(`/workload-identity/events?policy_id=${POLICY_ID}`, { key: keys.managementReadWrite });
    expect(response.body.data.map((e: { request_id: string }) => e.request_id)).toEqual(['req-4', 'req-2']);
    expect(response.body.next_cursor).toBeNull();
  });

  it.each([
    ['policy_id=not-a-uuid', 'Invalid policy_id: must be a policy id (a UUID)', 'policy_id'],
    ['limit=0', 'Invalid limit: must be an integer from 1 to 100', 'limit'],
    ['limit=101', 'Invalid limit: must be an integer from 1 to 100', 'limit'],
    ['cursor=bm9wZQ', 'Invalid cursor: cursor is not a cursor this endpoint returned', 'cursor'],
  ])('answers 400 naming the parameter for %s', async (query, message, parameter) => {
    const response = await service.call(`/workload-identity/events?${query}`, { key: keys.managementReadOnly });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: { code: 400, message, metadata: { parameter } } });
  });

  it('is reserved for management keys', async () => {
    const workspace = await service.call('/workload-identity/events', { key: keys.workspace });
    expect(workspace.status).toBe(403);
    expect(workspace.body).toEqual({ error: { code: 403, message: 'Operation reserved for management keys' } });
    expect((await service.call('/workload-identity/events')).status).toBe(401);
  });
});
