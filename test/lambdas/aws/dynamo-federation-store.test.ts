import { createHash, randomUUID } from 'node:crypto';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { UnfinishedWriteError } from '../../../lambdas/errors';
import { CountLimitReachedError, IssuerUrlTakenError } from '../../../lambdas/federation/federation-store';
import { DynamoFederationStore, STALE_CLAIM_MS } from '../../../lambdas/aws/dynamo-federation-store';
import { TABLE_SCHEMAS } from '../../../lambdas/aws/table-schemas';
import { startEmbeddedTables } from '../../support/embedded-tables';
import { makeIssuer, makePolicy } from '../../support/federation-fixtures';
import { describeFederationStoreContract } from '../../support/federation-store-contract';
import { FixedClock } from '../../support/fixed-clock';

const TABLE = TABLE_SCHEMAS.policies.localName;
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

describeFederationStoreContract('DynamoFederationStore on the embedded DynamoDB', () => ({
  store: () => store,
  organization: () => randomUUID(),
}));

describe('DynamoFederationStore', () => {
  it('stores a policy under its id alone, so the exchange finds it with one GetItem', async () => {
    const policy = makePolicy({ organizationId: randomUUID() });
    await store.createPolicy(policy);
    const raw = await tables.documentClient.send(new GetCommand({ TableName: TABLE, Key: { pk: `POLICY#${policy.id}`, sk: 'POLICY' } }));
    expect(raw.Item).toMatchObject({ id: policy.id, organizationId: policy.organizationId, version: 1 });
  });

  it('lets exactly one of many concurrent writers from one read win', async () => {
    const policy = makePolicy({ organizationId: randomUUID() });
    await store.createPolicy(policy);
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => store.updatePolicy({ ...policy, name: `writer ${i}`, version: 2 }, 1)),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
    const winner = results.indexOf(true);
    expect((await store.getPolicy(policy.id))?.name).toBe(`writer ${winner}`);
  });

  it('gives each of two concurrent creates of one URL a clear answer: one issuer, one IssuerUrlTakenError', async () => {
    const org = randomUUID();
    const outcomes = await Promise.allSettled([
      store.createIssuer(makeIssuer({ organizationId: org, issuerUrl: 'https://race.example' })),
      store.createIssuer(makeIssuer({ organizationId: org, issuerUrl: 'https://race.example' })),
    ]);
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    expect(outcomes.find((o) => o.status === 'rejected')).toMatchObject({ reason: expect.any(IssuerUrlTakenError) });
    expect(await store.listIssuers(org)).toHaveLength(1);
  });

  describe('URL claims belong to the write that made them', () => {
    const claimKey = (org: string, url: string) => ({ pk: `ORG#${org}`, sk: `ISSUER_URL#${createHash('sha256').update(url).digest('hex')}` });

    it('keeps the URL claimed when two writes from one read move an issuer onto it (10 of 10 rounds)', async () => {
      for (let round = 0; round < 10; round++) {
        const org = randomUUID();
        const issuer = makeIssuer({ organizationId: org, issuerUrl: 'https://start.example' });
        await store.createIssuer(issuer);
        const moved = { ...issuer, issuerUrl: 'https://moved.example', version: 2 };

        const written = await Promise.all([store.updateIssuer(moved, 1), store.updateIssuer({ ...moved, name: 'other' }, 1)]);

        expect(written.filter(Boolean)).toHaveLength(1);
        expect((await store.getIssuer(org, issuer.id))?.issuerUrl).toBe('https://moved.example');
        await expect(store.createIssuer(makeIssuer({ organizationId: org, issuerUrl: 'https://moved.example' }))).rejects.toBeInstanceOf(IssuerUrlTakenError);
        await store.createIssuer(makeIssuer({ organizationId: org, issuerUrl: 'https://start.example' }));
      }
    });

    it('releases the claim a write made when the write loses the version race, and no other', async () => {
      const org = randomUUID();
      const issuer = makeIssuer({ organizationId: org, issuerUrl: 'https://a.example' });
      await store.createIssuer(issuer);
      expect(await store.updateIssuer({ ...issuer, name: 'renamed', version: 2 }, 1)).toBe(true);

      expect(await store.updateIssuer({ ...issuer, issuerUrl: 'https://b.example', version: 2 }, 1)).toBe(false);

      await store.createIssuer(makeIssuer({ organizationId: org, issuerUrl: 'https://b.example' }));
      await expect(store.createIssuer(makeIssuer({ organizationId: org, issuerUrl: 'https://a.example' }))).rejects.toBeInstanceOf(IssuerUrlTakenError);
    });

    it('reports a change, and takes nothing, when another write of the same issuer holds the URL', async () => {
      const org = randomUUID();
      const issuer = makeIssuer({ organizationId: org, issuerUrl: 'https://a.example' });
      await store.createIssuer(issuer);
      // Another write of this issuer claimed b.example and has not written the issuer yet.
      const other = { ...claimKey(org, 'https://b.example'), issuerId: issuer.id, issuerUrl: 'https://b.example', claimId: randomUUID(), claimedAt: clock.now().toISOString() };
      await tables.documentClient.send(new PutCommand({ TableName: TABLE, Item: other }));

      expect(await store.updateIssuer({ ...issuer, issuerUrl: 'https://b.example', version: 2 }, 1)).toBe(false);
      expect((await tables.documentClient.send(new GetCommand({ TableName: TABLE, Key: claimKey(org, 'https://b.example') }))).Item).toEqual(other);

      // Once that write is long gone without having written the issuer, its claim is taken over.
      clock.advance(STALE_CLAIM_MS + 1);
      expect(await store.updateIssuer({ ...issuer, issuerUrl: 'https://b.example', version: 2 }, 1)).toBe(true);
      await expect(store.createIssuer(makeIssuer({ organizationId: org, issuerUrl: 'https://b.example' }))).rejects.toBeInstanceOf(IssuerUrlTakenError);
    });

    it('releases, on delete, the claim the issuer relies on', async () => {
      const org = randomUUID();
      const issuer = makeIssuer({ organizationId: org, issuerUrl: 'https://a.example' });
      await store.createIssuer(issuer);
      expect(await store.deleteIssuer(org, issuer.id)).toBe(true);
      expect((await tables.documentClient.send(new GetCommand({ TableName: TABLE, Key: claimKey(org, 'https://a.example') }))).Item).toBeUndefined();
    });

    it('moves an issuer written before claims had ids off its URL, releasing its claim', async () => {
      const org = randomUUID();
      const issuer = makeIssuer({ organizationId: org, issuerUrl: 'https://old-style.example' });
      await tables.documentClient.send(new PutCommand({ TableName: TABLE, Item: { pk: `ORG#${org}`, sk: `ISSUER#${issuer.id}`, ...issuer } }));
      await tables.documentClient.send(
        new PutCommand({
          TableName: TABLE,
          Item: { ...claimKey(org, issuer.issuerUrl), issuerId: issuer.id, issuerUrl: issuer.issuerUrl, claimedAt: '2026-01-01T00:00:00.000Z' },
        }),
      );
      await expect(store.createIssuer(makeIssuer({ organizationId: org, issuerUrl: issuer.issuerUrl }))).rejects.toBeInstanceOf(IssuerUrlTakenError);

      expect(await store.updateIssuer({ ...issuer, issuerUrl: 'https://new-style.example', version: 2 }, 1)).toBe(true);

      await store.createIssuer(makeIssuer({ organizationId: org, issuerUrl: issuer.issuerUrl }));
      await expect(store.createIssuer(makeIssuer({ organizationId: org, issuerUrl: 'https://new-style.example' }))).rejects.toBeInstanceOf(IssuerUrlTakenError);
    });
  });

  describe('a claim left behind by an interrupted write (no issuer holds it)', () => {
    const org = randomUUID();
    const url = 'https://interrupted.example';

    beforeAll(async () => {
      clock.set('2026-11-21T12:00:00.250Z');
      // What a crash between the claim and the issuer write leaves.
      await tables.documentClient.send(
        new PutCommand({
          TableName: TABLE,
          Item: {
            pk: `ORG#${org}`,
            sk: `ISSUER_URL#${createHash('sha256').update(url).digest('hex')}`,
            issuerId: randomUUID(),
            issuerUrl: url,
            claimedAt: clock.now().toISOString(),
          },
        }),
      );
    });

    it('is invisible to readers: no issuer is listed', async () => {
      expect(await store.listIssuers(org)).toEqual([]);
    });

    it('still blocks the URL while it may belong to a create in progress, saying so and until when', async () => {
      clock.advance(STALE_CLAIM_MS);
      const refusal = store.createIssuer(makeIssuer({ organizationId: org, issuerUrl: url }));
      await expect(refusal).rejects.toBeInstanceOf(UnfinishedWriteError);
      await expect(refusal).rejects.toMatchObject({
        kind: 'conflict',
        message: `The issuer_url ${url} is held by a write that has not finished: free again at 2026-11-21T12:01:01.000Z unless that write completes`,
        metadata: { free_at: '2026-11-21T12:01:01.000Z' },
      });
    });

    it('is taken over at the time the refusal stated, so the URL is never blocked for good', async () => {
      clock.set('2026-11-21T12:01:01.000Z');
      const issuer = makeIssuer({ organizationId: org, issuerUrl: url });
      await store.createIssuer(issuer);
      expect((await store.listIssuers(org)).map((i) => i.id)).toEqual([issuer.id]);
    });
  });
});

describe('DynamoFederationStore: claims orphaned by a crash', () => {
  it('takes over at once a URL claim and a limit place from before a restart, which a running store still honours', async () => {
    const org = randomUUID();
    const urlKey = { pk: `ORG#${org}`, sk: `ISSUER_URL#${createHash('sha256').update('https://orphaned.example', 'utf8').digest('hex')}` };
    // A process killed after claiming the URL and taking a place under the limit, before writing the issuer.
    const takenAt = clock.now().toISOString();
    await tables.documentClient.send(new PutCommand({ TableName: TABLE, Item: { ...urlKey, issuerId: 'never-written', issuerUrl: 'https://orphaned.example', claimId: randomUUID(), claimedAt: takenAt } }));
    await tables.documentClient.send(new PutCommand({ TableName: TABLE, Item: { pk: `ORG#${org}`, sk: 'LIMIT#issuers', holders: { 'never-written': takenAt } } }));

    const freeAt = new Date(Math.ceil((Date.parse(takenAt) + STALE_CLAIM_MS + 1) / 1000) * 1000).toISOString();
    await expect(store.createIssuer(makeIssuer({ organizationId: org, issuerUrl: 'https://orphaned.example' }))).rejects.toThrow(
      new UnfinishedWriteError('The issuer_url https://orphaned.example is held', new Date(freeAt)),
    );
    // A limit of one, held by the place that was never written: refused while its writer may run.
    await expect(store.createIssuer(makeIssuer({ organizationId: org, issuerUrl: 'https://other.example' }), 1)).rejects.toBeInstanceOf(CountLimitReachedError);

    const restarted = new DynamoFederationStore(tables.documentClient, TABLE, clock, undefined, new Date(clock.now().getTime() + 1));
    const issuer = makeIssuer({ organizationId: org, issuerUrl: 'https://orphaned.example' });
    await restarted.createIssuer(issuer, 1);
    expect((await restarted.getIssuer(org, issuer.id))?.issuerUrl).toBe('https://orphaned.example');
  });
});
