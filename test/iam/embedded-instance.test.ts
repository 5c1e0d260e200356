import { KMSClient, SignCommand } from '@aws-sdk/client-kms';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { runDemo } from '../../local/demo';
import { functionCredentials, type StackFunctionId } from '../../local/function-principals';
import { IamGate } from '../support/iam/iam-gate';
import { createRotatedSigningKey, createStackSigningKey } from '../support/iam/stand-in-signing-key';
import { synthesizeEmbeddedInstance, type SynthesizedStack } from '../support/iam/stack-template';
import { startKmsStandIn, type KmsStandIn } from '../support/kms-stand-in';
import { startTestService } from '../support/local-service';
import { startSecretsManagerStandIn } from '../support/secrets-manager-stand-in';

/**
 * The instance a user embeds in a stack of their own, `new Modelgate(stack, 'Gateway', { instance:
 * 'Embedded', exchangeRateLimit: 30 })`, behind the IAM gate: its functions' roles, found below
 * `Platform/Gateway`, are enough for everything the service does, and its key and secret keep
 * other principals out as the CLI stack's do.
 */
describe('an instance in a stack of its user, behind the IAM gate', () => {
  let embedded: SynthesizedStack;
  beforeAll(() => {
    embedded = synthesizeEmbeddedInstance({ instance: 'Embedded', exchangeRateLimit: 30 });
  }, 120_000);

  it("runs the demo end to end (issuer, policy, exchange, JWKS, catalog, streamed completion, usage, events, DPoP) with no request its roles deny", async () => {
    const service = await startTestService({ iam: { stack: embedded } });
    try {
      const demo = await runDemo({ dataDir: service.dataDir, out: () => undefined });
      await demo.identityProvider.close();
      expect(service.iam.denials).toEqual([]);
      expect(service.iam.errors).toEqual([]);
      expect(Object.keys(service.iam.seenActions()).sort()).toEqual(['Catalog', 'Inference', 'Jwks', 'Management', 'TokenExchange']);
      expect(service.iam.principal('TokenExchange')!.roleArn).toMatch(/^arn:aws:iam::123456789012:role\/GatewayTokenExchangeRole[0-9A-F]{8}$/);
    } finally {
      // Fails on any denial a handler swallowed.
      await service.stop();
    }
  }, 120_000);

  describe('its signing key, in the KMS stand-in with the policy and tags of the template', () => {
    let kms: KmsStandIn;
    const clients: KMSClient[] = [];
    const sign = (fn: StackFunctionId, keyId: string) => {
      const client = new KMSClient({ endpoint: kms.endpoint, region: 'eu-west-1', credentials: functionCredentials(fn), maxAttempts: 1 });
      clients.push(client);
      return client.send(new SignCommand({ KeyId: keyId, Message: Buffer.alloc(32, 1), MessageType: 'DIGEST', SigningAlgorithm: 'ECDSA_SHA_256' }));
    };
    afterAll(async () => {
      for (const client of clients) client.destroy();
      await kms?.stop();
    });

    it("signs for the token exchange only, with its own key and the keys rotated under the instance's tag, not another instance's", async () => {
      const gate = new IamGate(embedded);
      kms = await startKmsStandIn({ authorize: gate.standInAuthorizer() });
      const keyArn = await createStackSigningKey(kms, gate);
      const key = gate.resources.find((resource) => resource.type === 'AWS::KMS::Key' && resource.keyUsage === 'SIGN_VERIFY')!;
      expect(key.tags).toEqual({ 'modelgate:access-token-signing': 'Embedded' });
      const rotated = await createRotatedSigningKey(kms, key.policy, { 'modelgate:access-token-signing': 'Embedded' });
      const foreign = await createRotatedSigningKey(kms, key.policy, { 'modelgate:access-token-signing': 'Modelgate' });

      await expect(sign('tokenExchange', keyArn)).resolves.toMatchObject({ KeyId: keyArn });
      await expect(sign('tokenExchange', rotated)).resolves.toMatchObject({ KeyId: rotated });
      await expect(sign('tokenExchange', foreign)).rejects.toMatchObject({ name: 'AccessDeniedException', message: expect.stringContaining('because no identity-based policy allows the kms:Sign action') });
      await expect(sign('management', keyArn)).rejects.toMatchObject({ name: 'AccessDeniedException', message: expect.stringContaining('with an explicit deny in a resource-based policy') });
    });
  });

  it('lets only the inference function read the provider credentials secret', async () => {
    const gate = new IamGate(embedded);
    const secrets = await startSecretsManagerStandIn({ authorize: gate.standInAuthorizer() });
    const clients: SecretsManagerClient[] = [];
    const read = (fn: StackFunctionId, arn: string) => {
      const client = new SecretsManagerClient({ endpoint: secrets.endpoint, region: 'us-east-1', credentials: functionCredentials(fn), maxAttempts: 1 });
      clients.push(client);
      return client.send(new GetSecretValueCommand({ SecretId: arn }));
    };
    try {
      const arn = await secrets.createSecret('provider-credentials', '{"*":"sk-test"}');
      gate.bind(gate.resources.find((resource) => resource.type === 'AWS::SecretsManager::Secret')!.logicalId, { ref: arn, arn });
      await expect(read('inference', arn)).resolves.toMatchObject({ SecretString: '{"*":"sk-test"}' });
      await expect(read('catalog', arn)).rejects.toMatchObject({ name: 'AccessDeniedException' });
    } finally {
      for (const client of clients) client.destroy();
      await secrets.stop();
    }
  });
});
