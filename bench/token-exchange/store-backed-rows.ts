import { systemClock } from '../../lambdas/clock';
import { DynamoAccountStore } from '../../lambdas/aws/dynamo-account-store';
import { createDocumentClient } from '../../lambdas/aws/dynamo-client';
import { DynamoExchangeEventStore } from '../../lambdas/aws/dynamo-exchange-event-store';
import { DynamoFederationStore } from '../../lambdas/aws/dynamo-federation-store';
import { DynamoJtiStore } from '../../lambdas/aws/dynamo-jti-store';
import { DynamoRateCounterStore } from '../../lambdas/aws/dynamo-rate-counter-store';
import { DynamoSigningKeyStore } from '../../lambdas/aws/dynamo-signing-key-store';
import { TABLE_SCHEMAS } from '../../lambdas/aws/table-schemas';
import { ActiveSigner } from '../../lambdas/signing/active-signer';
import { LOCAL_KEY_REF_PREFIX } from '../../lambdas/wiring/signer-for-record';
import { startEmbeddedDynamoDb } from '../../local/embedded-dynamodb';
import { LOCAL_SIGNING_KEY_FILE } from '../../local/signing-keys';
import { createTables } from '../../local/tables';
import type { ExchangeRowsDeps } from './exchange-rows';
import { context, formBody, issuer, organization, policy, proxyEvent, workspaceKey } from './fixtures';
import { buildHandler } from './handler';
import { perSecond, us } from './timing';

/** The same handler over the DynamoDB stores on the embedded DynamoDB: sequentially, then 8 requests in flight. */
export async function storeBackedRows({ evaluation, signer, token, next }: ExchangeRowsDeps): Promise<void> {
  const dynamo = await startEmbeddedDynamoDb();
  try {
    await createTables(dynamo.client);
    const documentClient = createDocumentClient(dynamo.client);
    const dynamoFederation = new DynamoFederationStore(documentClient, TABLE_SCHEMAS.policies.localName);
    await dynamoFederation.createIssuer(issuer);
    await dynamoFederation.createPolicy(policy);
    const dynamoAccounts = new DynamoAccountStore(documentClient, TABLE_SCHEMAS.keys.localName);
    await dynamoAccounts.createOrganization(organization);
    await dynamoAccounts.createApiKey(workspaceKey);
    const signingKeys = new DynamoSigningKeyStore(documentClient, TABLE_SCHEMAS.keys.localName);
    await signingKeys.put({ kid: signer.kid, keyRef: `${LOCAL_KEY_REF_PREFIX}${LOCAL_SIGNING_KEY_FILE}`, publicJwk: signer.publicJwk, status: 'active', createdAt: new Date().toISOString(), retiredAt: null });
    const activeSigner = new ActiveSigner(signingKeys, async () => signer, systemClock);
    const storeHandler = buildHandler({
      evaluation: { ...evaluation, federation: dynamoFederation, accounts: dynamoAccounts },
      signer: () => activeSigner.signer(),
      stores: {
        rateCounters: new DynamoRateCounterStore(documentClient, TABLE_SCHEMAS.rateCounters.localName),
        jtis: new DynamoJtiStore(documentClient, TABLE_SCHEMAS.policies.localName),
        events: new DynamoExchangeEventStore(documentClient, TABLE_SCHEMAS.policies.localName),
      },
    });
    const body = formBody(token);
    const storeCheck = await storeHandler(proxyEvent(body, next()), context);
    if (storeCheck.statusCode !== 200) throw new Error(`the store-backed bench exchange was refused: ${storeCheck.body}`);
    const sequential = 300;
    let start = performance.now();
    for (let i = 0; i < sequential; i++) await storeHandler(proxyEvent(body, next()), context);
    const sequentialMs = (performance.now() - start) / sequential;
    const inFlight = 8;
    const total = 400;
    start = performance.now();
    let sent = 0;
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (sent++ < total) await storeHandler(proxyEvent(body, next()), context);
      }),
    );
    const concurrentMs = (performance.now() - start) / total;
    console.log(`  handler, embedded DynamoDB     ${us(sequentialMs)}  ${perSecond(sequentialMs)}   (sequential; 4 reads, 2 writes each)`);
    console.log(`  handler, embedded DynamoDB     ${us(concurrentMs)}  ${perSecond(concurrentMs)}   (${inFlight} in flight)`);
  } finally {
    await dynamo.stop();
  }
}
