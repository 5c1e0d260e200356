import { randomUUID } from 'node:crypto';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { IssuerUrlTakenError } from '../../../lambdas/federation/federation-store';
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

  describe('a claim left behind by an interrupted write (no issuer holds it)', () => {
    const org = randomUUID();
    const url = 'https://interrupted.example';

    beforeAll(async () => {
      // What a crash between the claim and the issuer write leaves.
      const { createHash } = await import('node:crypto');
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

    it('still blocks the URL while it may belong to a create in progress', async () => {
      await expect(store.createIssuer(makeIssuer({ organizationId: org, issuerUrl: url }))).rejects.toBeInstanceOf(IssuerUrlTakenError);
    });

    it('is taken over once stale, so the URL is never blocked for good', async () => {
      clock.advance(STALE_CLAIM_MS + 1);
      const issuer = makeIssuer({ organizationId: org, issuerUrl: url });
      await store.createIssuer(issuer);
      expect((await store.listIssuers(org)).map((i) => i.id)).toEqual([issuer.id]);
    });
  });
});
