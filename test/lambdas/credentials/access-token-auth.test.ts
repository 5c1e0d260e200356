import { join } from 'node:path';
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { hashApiKey } from '../../../lambdas/accounts/api-keys';
import { ACTING_KEY_CLAIM } from '../../../lambdas/credentials/access-token-verifier';
import { LocalSigner } from '../../../lambdas/signing/local-signer';
import { DynamoSigningKeyStore } from '../../../lambdas/aws/dynamo-signing-key-store';
import { TABLE_SCHEMAS } from '../../../lambdas/aws/table-schemas';
import { newLocalSigner, signJwt, signingKeyRecord } from '../../support/access-tokens';
import { connectToRuntime, type RuntimeStores } from '../../support/accounts';
import { startTestService, type TestService } from '../../support/local-service';

/**
 * Access tokens as bearer credentials through the real HTTP path (docs/reference.md#scopes-and-access rules 5 and 6):
 * the acting key is read on every request, so its state decides at once; a token is only
 * as good as its signing-key record. Tokens are signed with the runtime's own key, as the
 * token exchange signs them.
 */
describe('access tokens as bearer credentials', () => {
  let service: TestService;
  let stores: RuntimeStores;
  let signer: LocalSigner;
  const now = () => Math.floor(Date.now() / 1000);
  const tokenFor = (keyHash: string, claims: Record<string, unknown> = {}, by: LocalSigner = signer) =>
    signJwt(by, {
      iss: service.runtime.baseUrl,
      aud: service.runtime.baseUrl,
      sub: 'workload',
      iat: now(),
      exp: now() + 900,
      scope: 'inference',
      federation_policy_id: '00000000-0000-4000-8000-00000000000b',
      [ACTING_KEY_CLAIM]: keyHash,
      ...claims,
    });
  const models = (token: string) => service.call('/models/user?limit=1', { key: token });

  beforeAll(async () => {
    service = await startTestService();
    stores = connectToRuntime(service.runtime);
    signer = await LocalSigner.fromFile(join(service.dataDir, 'signing-key.pem'));
  });
  afterAll(async () => {
    stores?.destroy();
    await service?.stop();
  });

  it('stops a token at the next request when its key is disabled, lets it work again when re-enabled, and refuses it once the key is deleted', async () => {
    const { key, secret } = await stores.accounts.createApiKey(service.runtime.demo.organizationId, { kind: 'workspace', name: 'federated' });
    const token = await tokenFor(key.hash);
    expect((await models(token)).status).toBe(200);

    await stores.accounts.updateApiKey(service.runtime.demo.organizationId, key.hash, { disabled: true });
    expect(await models(token)).toMatchObject({ status: 401, body: { error: { code: 401, message: 'API key is disabled' } } });
    // The key itself is refused alike.
    expect((await models(secret)).status).toBe(401);

    await stores.accounts.updateApiKey(service.runtime.demo.organizationId, key.hash, { disabled: false });
    expect((await models(token)).status).toBe(200);

    await stores.accounts.deleteApiKey(service.runtime.demo.organizationId, key.hash);
    expect(await models(token)).toMatchObject({
      status: 401,
      body: { error: { code: 401, message: 'The API key behind this access token no longer exists' } },
    });
  });

  it('refuses an expired token and one for another API with 401', async () => {
    const hash = hashApiKey(service.runtime.demo.keys.workspace);
    for (const token of [await tokenFor(hash, { exp: now() - 1 }), await tokenFor(hash, { aud: 'https://other.example.com/api/v1' })]) {
      expect(await models(token)).toMatchObject({ status: 401, body: { error: { code: 401, message: 'Invalid or expired access token' } } });
    }
  });

  it('answers 401, not 500, to a correctly signed token whose signing-key record is gone', async () => {
    const retired = await newLocalSigner();
    const keys = new DynamoSigningKeyStore(stores.documentClient, TABLE_SCHEMAS.keys.localName);
    await keys.put(signingKeyRecord(retired));
    await stores.documentClient.send(new DeleteCommand({ TableName: TABLE_SCHEMAS.keys.localName, Key: { pk: 'SIGNING_KEY', sk: retired.kid } }));
    const token = await tokenFor(hashApiKey(service.runtime.demo.keys.workspace), {}, retired);
    expect(await models(token)).toMatchObject({ status: 401, body: { error: { code: 401, message: 'Invalid or expired access token' } } });
  });

  it('attributes usage to the acting key and the policy whichever credential made the call', async () => {
    const token = await tokenFor(hashApiKey(service.runtime.demo.keys.workspace));
    const completion = await service.call('/chat/completions', {
      key: token,
      method: 'POST',
      body: { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'via token' }] },
    });
    expect(completion.status).toBe(200);
    await service.call('/chat/completions', {
      key: service.runtime.demo.keys.workspace,
      method: 'POST',
      body: { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'via key' }] },
    });
    // Each completion is recorded before it is answered.
    const viaKey = await service.call('/key', { key: service.runtime.demo.keys.workspace });
    expect(viaKey.body.data.usage).toBeCloseTo(2 * (2 * 0.00000015 + 2 * 0.0000006), 15);
    expect((await service.call('/key', { key: token })).body).toEqual(viaKey.body);
    const activity = await service.call(`/activity?api_key_hash=${hashApiKey(service.runtime.demo.keys.workspace)}`, {
      key: service.runtime.demo.keys.managementReadOnly,
    });
    expect(activity.body.data).toEqual([
      expect.objectContaining({ requests: 2, requests_via_api_key: 1, requests_via_federation_policy: { '00000000-0000-4000-8000-00000000000b': 1 } }),
    ]);
  });
});
