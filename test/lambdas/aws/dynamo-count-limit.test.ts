import { randomUUID } from 'node:crypto';
import { BatchWriteCommand, DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoCountLimit } from '../../../lambdas/aws/dynamo-count-limit';
import { ABANDONED_PLACE_MS } from '../../../lambdas/aws/dynamo-places';
import { DynamoFederationStore } from '../../../lambdas/aws/dynamo-federation-store';
import { TABLE_SCHEMAS } from '../../../lambdas/aws/table-schemas';
import { CountLimitReachedError, IssuerUrlTakenError } from '../../../lambdas/federation/federation-store';
import type { FederationPolicy } from '../../../lambdas/federation/types';
import { startEmbeddedTables } from '../../support/embedded-tables';
import { makeIssuer, makePolicy } from '../../support/federation-fixtures';
import { FixedClock } from '../../support/fixed-clock';
import { interceptSend } from '../../support/intercepted-client';

const TABLE = TABLE_SCHEMAS.policies.localName;

/**
 * The per-organization count limits: one places item per organization and kind,
 * changed only by single-item conditional writes, so the bound is exact under concurrency and
 * after a crash, and a place a crash leaves behind is reclaimed.
 */
describe('per-organization count limits on the embedded DynamoDB', () => {
  let tables: Awaited<ReturnType<typeof startEmbeddedTables>>;
  let store: DynamoFederationStore;
  const clock = new FixedClock();

  beforeAll(async () => {
    tables = await startEmbeddedTables();
    store = new DynamoFederationStore(tables.documentClient, TABLE, clock);
  });
  afterAll(async () => {
    await tables.stop();
  });

  const times = <T>(n: number, make: (i: number) => Promise<T>) => Promise.allSettled(Array.from({ length: n }, (_, i) => make(i)));
  const fulfilled = (outcomes: PromiseSettledResult<unknown>[]) => outcomes.filter((o) => o.status === 'fulfilled').length;
  const places = (org: string, kind: 'issuers' | 'policies') =>
    tables.documentClient
      .send(new GetCommand({ TableName: TABLE, Key: { pk: `ORG#${org}`, sk: `LIMIT#${kind}` }, ConsistentRead: true }))
      .then((result) => Object.keys(result.Item?.holders ?? {}).sort());
  const policy = (org: string, overrides: Partial<FederationPolicy> = {}) => makePolicy({ organizationId: org, createdAt: clock.now().toISOString(), ...overrides });
  /** What a version without the bound wrote: policy items and no places. */
  async function writeUncounted(policies: readonly FederationPolicy[]) {
    for (let start = 0; start < policies.length; start += 25) {
      const items = policies.slice(start, start + 25).map((p) => ({
        PutRequest: {
          Item: { pk: `POLICY#${p.id}`, sk: 'POLICY', gsi1pk: `ORG#${p.organizationId}#POLICIES`, gsi1sk: `${p.issuerId}#${p.createdAt}#${p.id}`, ...p },
        },
      }));
      await tables.documentClient.send(new BatchWriteCommand({ RequestItems: { [TABLE]: items } }));
    }
  }

  it('lets exactly 10 of 40 concurrent creates through at 40 of 50 policies, refusing the rest', async () => {
    const org = randomUUID();
    for (let i = 0; i < 40; i++) await store.createPolicy(policy(org), 50);

    const outcomes = await times(40, () => store.createPolicy(policy(org), 50));

    expect(fulfilled(outcomes)).toBe(10);
    for (const outcome of outcomes.filter((o) => o.status === 'rejected')) {
      expect((outcome as PromiseRejectedResult).reason).toEqual(new CountLimitReachedError('policies', 50));
    }
    const listed = (await store.listPolicies(org)).map((p) => p.id).sort();
    expect(listed).toHaveLength(50);
    expect(await places(org, 'policies')).toEqual(listed);
  });

  it('lets exactly 5 of 20 concurrent issuer creates through at 95 of 100', async () => {
    const org = randomUUID();
    for (let i = 0; i < 95; i++) await store.createIssuer(makeIssuer({ organizationId: org, issuerUrl: `https://idp-${i}.example` }), 100);

    const outcomes = await times(20, (i) => store.createIssuer(makeIssuer({ organizationId: org, issuerUrl: `https://burst-${i}.example` }), 100));

    expect(fulfilled(outcomes)).toBe(5);
    expect(await store.listIssuers(org)).toHaveLength(100);
    expect(await places(org, 'issuers')).toHaveLength(100);
  });

  it('counts the policies an organization had before the bound on its first create, also when that create races others', async () => {
    for (let round = 0; round < 5; round++) {
      const org = randomUUID();
      await writeUncounted(Array.from({ length: 20 }, () => policy(org)));

      const outcomes = await times(20, () => store.createPolicy(policy(org), 25));

      expect(fulfilled(outcomes)).toBe(5);
      expect(await store.listPolicies(org)).toHaveLength(25);
      expect(await places(org, 'policies')).toHaveLength(25);
    }
  });

  it('gives the place back when the create fails, and when the item is deleted', async () => {
    const org = randomUUID();
    const first = makeIssuer({ organizationId: org, issuerUrl: 'https://one.example' });
    await store.createIssuer(first, 2);
    // A taken URL: the second issuer's place is given back.
    await expect(store.createIssuer(makeIssuer({ organizationId: org, issuerUrl: 'https://one.example' }), 2)).rejects.toBeInstanceOf(IssuerUrlTakenError);
    expect(await places(org, 'issuers')).toEqual([first.id]);

    const second = makeIssuer({ organizationId: org, issuerUrl: 'https://two.example' });
    await store.createIssuer(second, 2);
    await expect(store.createIssuer(makeIssuer({ organizationId: org, issuerUrl: 'https://three.example' }), 2)).rejects.toBeInstanceOf(CountLimitReachedError);
    expect(await store.deleteIssuer(org, first.id)).toBe(true);
    expect(await places(org, 'issuers')).toEqual([second.id]);
    await store.createIssuer(makeIssuer({ organizationId: org, issuerUrl: 'https://three.example' }), 2);

    const p = policy(org);
    await store.createPolicy(p, 1);
    await expect(store.createPolicy(policy(org), 1)).rejects.toBeInstanceOf(CountLimitReachedError);
    expect(await store.deletePolicy(org, p.id)).toBe(true);
    expect(await places(org, 'policies')).toEqual([]);
    await store.createPolicy(policy(org), 1);
  });

  describe('a place left by a crash', () => {
    const counted = (org: string) =>
      new DynamoCountLimit(tables.documentClient, TABLE, { kind: 'policies', keyOf: (_o, id) => ({ pk: `POLICY#${id}`, sk: 'POLICY' }), list: async () => [] }, clock);

    it('between taking it and writing the item: holds while young, is reclaimed once abandoned', async () => {
      const org = randomUUID();
      await store.createPolicy(policy(org), 2);
      // The process took a place for this policy and died before writing it.
      expect(await counted(org).take(org, randomUUID(), 2)).toBe(true);

      await expect(store.createPolicy(policy(org), 2)).rejects.toBeInstanceOf(CountLimitReachedError);
      clock.advance(ABANDONED_PLACE_MS + 1);
      const next = policy(org);
      await store.createPolicy(next, 2);

      expect(await store.listPolicies(org)).toHaveLength(2);
      expect(await places(org, 'policies')).toHaveLength(2);
      await expect(store.createPolicy(policy(org), 2)).rejects.toBeInstanceOf(CountLimitReachedError);
    });

    it('between deleting the item and giving its place back: reclaimed once abandoned', async () => {
      const org = randomUUID();
      const doomed = policy(org);
      await store.createPolicy(doomed, 1);
      // The item is deleted, then the process dies before giving the place back.
      await tables.documentClient.send(new DeleteCommand({ TableName: TABLE, Key: { pk: `POLICY#${doomed.id}`, sk: 'POLICY' } }));
      clock.advance(ABANDONED_PLACE_MS + 1);

      await store.createPolicy(policy(org), 1);

      expect(await store.listPolicies(org)).toHaveLength(1);
      expect(await places(org, 'policies')).toHaveLength(1);
    });

    it('is not swept again within the window after a sweep found nothing, so refused creates stay cheap', async () => {
      const org = randomUUID();
      const doomed = policy(org);
      await store.createPolicy(doomed, 1);
      clock.advance(ABANDONED_PLACE_MS + 1);
      await expect(store.createPolicy(policy(org), 1)).rejects.toBeInstanceOf(CountLimitReachedError);
      await tables.documentClient.send(new DeleteCommand({ TableName: TABLE, Key: { pk: `POLICY#${doomed.id}`, sk: 'POLICY' } }));

      await expect(store.createPolicy(policy(org), 1)).rejects.toBeInstanceOf(CountLimitReachedError);
      clock.advance(ABANDONED_PLACE_MS + 1);
      await store.createPolicy(policy(org), 1);
    });
  });

  it('never above the limit: a create slower than the window, whose place was reclaimed meanwhile, removes its item', async () => {
    const org = randomUUID();
    // A client whose policy write waits until the test lets it go.
    let arrived!: () => void;
    const atWrite = new Promise<void>((resolve) => (arrived = resolve));
    let proceed!: () => void;
    const resume = new Promise<void>((resolve) => (proceed = resolve));
    const slowClient = interceptSend(tables.documentClient, async (command, send) => {
      if (command instanceof PutCommand && String(command.input.Item?.pk).startsWith('POLICY#')) {
        arrived();
        await resume;
      }
      return send();
    });
    const slowStore = new DynamoFederationStore(slowClient, TABLE, clock);

    const slow = slowStore.createPolicy(policy(org), 1);
    await atWrite;
    clock.advance(ABANDONED_PLACE_MS + 1);
    // Its place looks abandoned (no item yet): another create reclaims it.
    const quick = policy(org);
    await store.createPolicy(quick, 1);
    proceed();

    await expect(slow).rejects.toBeInstanceOf(CountLimitReachedError);
    expect((await store.listPolicies(org)).map((p) => p.id)).toEqual([quick.id]);
    expect(await places(org, 'policies')).toEqual([quick.id]);
  });
});
