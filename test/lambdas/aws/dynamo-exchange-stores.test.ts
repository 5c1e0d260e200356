import { InvalidCursorError, type ExchangeEvent } from '../../../lambdas/federation/exchange-events';
import { RememberingRateCounters, checkExchangeRate } from '../../../lambdas/oauth/exchange-rate-limit';
import { interceptSend } from '../../support/intercepted-client';
import { DynamoExchangeEventStore } from '../../../lambdas/aws/dynamo-exchange-event-store';
import { DynamoJtiStore } from '../../../lambdas/aws/dynamo-jti-store';
import { DynamoRateCounterStore } from '../../../lambdas/aws/dynamo-rate-counter-store';
import { TABLE_SCHEMAS } from '../../../lambdas/aws/table-schemas';
import { startEmbeddedTables } from '../../support/embedded-tables';
import { ISSUER_ID, ORG_ID, POLICY_ID } from '../../support/exchange-fixtures';

const NOW = new Date('2026-11-21T12:00:10Z');
const NOW_S = NOW.getTime() / 1000;

describe('token exchange stores on the embedded DynamoDB', () => {
  let tables: Awaited<ReturnType<typeof startEmbeddedTables>>;
  beforeAll(async () => {
    tables = await startEmbeddedTables();
  });
  afterAll(async () => {
    await tables.stop();
  });

  describe('DynamoRateCounterStore', () => {
    it('lets exactly the limit through when requests from one address arrive at once', async () => {
      const store = new DynamoRateCounterStore(tables.documentClient, TABLE_SCHEMAS.rateCounters.localName);
      const decisions = await Promise.all(
        Array.from({ length: 25 }, () => checkExchangeRate(store, '192.0.2.10', NOW, { limit: 10, windowSeconds: 60 })),
      );
      expect(decisions.filter((d) => d.allowed)).toHaveLength(10);
      expect(decisions.filter((d) => !d.allowed)).toEqual(Array(15).fill({ allowed: false, retryAfterSeconds: 50 }));
      // The next window is a new counter.
      const later = await checkExchangeRate(store, '192.0.2.10', new Date(NOW.getTime() + 50_000), { limit: 10, windowSeconds: 60 });
      expect(later).toEqual({ allowed: true });
    });

    it('refuses an address it found at its limit without a write until the window ends, and counts every hit below it', async () => {
      let writes = 0;
      const counting = interceptSend(tables.documentClient, (command, send) => {
        if (command.constructor.name === 'UpdateCommand') writes++;
        return send();
      });
      const store = new RememberingRateCounters(new DynamoRateCounterStore(counting, TABLE_SCHEMAS.rateCounters.localName));
      const limit = { limit: 5, windowSeconds: 60 };
      const decisions = [];
      // A flood from one address, one at a time as one container takes them.
      for (let i = 0; i < 200; i++) decisions.push(await checkExchangeRate(store, '198.51.100.7', NOW, limit));
      expect(decisions.filter((d) => d.allowed)).toHaveLength(5);
      // The five counted, and the one that found the counter full: then nothing until the window ends.
      expect(writes).toBe(6);
      expect(await checkExchangeRate(store, '198.51.100.7', new Date(NOW.getTime() + 49_000), limit)).toEqual({ allowed: false, retryAfterSeconds: 1 });
      expect(writes).toBe(6);
      expect(await checkExchangeRate(store, '198.51.100.7', new Date(NOW.getTime() + 50_000), limit)).toEqual({ allowed: true });
      expect(writes).toBe(7);
    });

    it('counts the addresses of one IPv6 /64 together, and other /64s apart', async () => {
      const store = new DynamoRateCounterStore(tables.documentClient, TABLE_SCHEMAS.rateCounters.localName);
      const limit = { limit: 2, windowSeconds: 60 };
      expect(await checkExchangeRate(store, '2001:db8:1:2::1', NOW, limit)).toEqual({ allowed: true });
      expect(await checkExchangeRate(store, '2001:0db8:0001:0002:ffff::9', NOW, limit)).toEqual({ allowed: true });
      expect(await checkExchangeRate(store, '2001:db8:1:2:aaaa:bbbb:cccc:dddd', NOW, limit)).toMatchObject({ allowed: false });
      expect(await checkExchangeRate(store, '2001:db8:1:3::1', NOW, limit)).toEqual({ allowed: true });
    });
  });

  describe('DynamoJtiStore', () => {
    it('claims a jti once per issuer, treats an expired claim as absent, and releases only its own claim', async () => {
      const store = new DynamoJtiStore(tables.documentClient, TABLE_SCHEMAS.policies.localName);
      const long = 'j'.repeat(5000);
      expect(await store.claim(ISSUER_ID, long, NOW_S + 60, 'req-1', NOW)).toBe(true);
      expect(await store.claim(ISSUER_ID, long, NOW_S + 60, 'req-2', NOW)).toBe(false);
      expect(await store.claim('other-issuer', long, NOW_S + 60, 'req-3', NOW)).toBe(true);

      await store.release(ISSUER_ID, long, 'req-2');
      expect(await store.claim(ISSUER_ID, long, NOW_S + 60, 'req-4', NOW)).toBe(false);
      await store.release(ISSUER_ID, long, 'req-1');
      expect(await store.claim(ISSUER_ID, long, NOW_S + 60, 'req-5', NOW)).toBe(true);

      const afterExpiry = new Date((NOW_S + 60) * 1000);
      expect(await store.claim(ISSUER_ID, long, NOW_S + 120, 'req-6', afterExpiry)).toBe(true);
    });

    it('lets exactly one of many concurrent presentations of one jti through', async () => {
      const store = new DynamoJtiStore(tables.documentClient, TABLE_SCHEMAS.policies.localName);
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => store.claim(ISSUER_ID, 'race', NOW_S + 60, `r${i}`, NOW)));
      expect(results.filter(Boolean)).toHaveLength(1);
    });
  });

  describe('DynamoExchangeEventStore', () => {
    const event = (i: number, overrides: Partial<ExchangeEvent> = {}): ExchangeEvent => ({
      id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      organizationId: ORG_ID,
      time: new Date(NOW.getTime() - 1000 * (100 - i)).toISOString(),
      policyId: i % 2 === 0 ? POLICY_ID : 'f0f0f0f0-0000-4000-8000-000000000000',
      issuerId: ISSUER_ID,
      outcome: i % 3 === 0 ? 'issued' : 'refused',
      reason: i % 3 === 0 ? null : 'sub_mismatch',
      subject: 'repo:acme/app',
      subjectVerified: true,
      sourceIp: '192.0.2.1',
      requestId: `req-${i}`,
      tokenJti: i % 3 === 0 ? `jti-${i}` : null,
      dpopJkt: null,
      expiresAt: NOW_S + 86_400,
      ...overrides,
    });
    let store: DynamoExchangeEventStore;
    beforeAll(async () => {
      store = new DynamoExchangeEventStore(tables.documentClient, TABLE_SCHEMAS.policies.localName);
      for (let i = 1; i <= 7; i++) await store.record(event(i));
      await store.record(event(8, { expiresAt: NOW_S - 1 }));
      await store.record(event(9, { organizationId: 'another-org' }));
    });

    const listAll = async (policyId?: string) => {
      const ids: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await store.list({ organizationId: ORG_ID, policyId, limit: 2, cursor, now: NOW });
        expect(page.events.length).toBeLessThanOrEqual(2);
        ids.push(...page.events.map((e) => e.requestId));
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
      return ids;
    };

    it("lists the organization's live events newest first, page by page", async () => {
      expect(await listAll()).toEqual(['req-7', 'req-6', 'req-5', 'req-4', 'req-3', 'req-2', 'req-1']);
      const first = await store.list({ organizationId: ORG_ID, limit: 1, now: NOW });
      expect(first.events).toEqual([event(7)]);
    });

    it("narrows to one policy's events", async () => {
      expect(await listAll(POLICY_ID)).toEqual(['req-6', 'req-4', 'req-2']);
    });

    it('refuses a cursor it did not hand out', async () => {
      for (const cursor of ['x', Buffer.from('["a","b"]').toString('base64url'), Buffer.from('{}').toString('base64url')]) {
        await expect(store.list({ organizationId: ORG_ID, limit: 2, cursor, now: NOW })).rejects.toBeInstanceOf(InvalidCursorError);
      }
    });
  });
});
