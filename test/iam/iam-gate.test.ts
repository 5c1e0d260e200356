import { GetPublicKeyCommand, KMSClient, SignCommand } from '@aws-sdk/client-kms';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { functionCredentials, type StackFunctionId } from '../../local/function-principals';
import { startKmsStandIn, type KmsStandIn } from '../support/kms-stand-in';
import { startSecretsManagerStandIn } from '../support/secrets-manager-stand-in';
import { dynamoDbAuthorizations } from '../support/iam/dynamodb-authorizations';
import { IamGate } from '../support/iam/iam-gate';
import { createRotatedSigningKey, createStackSigningKey } from '../support/iam/stand-in-signing-key';
import { loadStack, type SynthesizedStack } from '../support/iam/stack-template';
import { withRoleStatement } from '../support/iam/template-edits';

const ENV = { account: '123456789012', region: 'us-east-1' };
const KEYS = 'arn:aws:dynamodb:us-east-1:123456789012:table/modelgate-keys';
const SIGNING_KEY_RECORD = { pk: { S: 'SIGNING_KEY' }, sk: { S: 'kid-1' } };
const API_KEY_RECORD = { pk: { S: 'KEY#0f0f' }, sk: { S: 'KEY' } };

/**
 * The IAM gate over the synthesized stack: each request evaluated against the calling
 * function's role policies and the resource's policy, with the condition keys AWS sets, and
 * refused with the message AWS gives.
 */
describe('the IAM gate', () => {
  let stack: SynthesizedStack;
  let gate: IamGate;
  beforeAll(() => {
    stack = loadStack();
    gate = new IamGate(stack);
  });

  /** The decision for one DynamoDB request of `accessKeyId`: undefined when allowed, else the denial message. */
  const dynamo = (accessKeyId: string, operation: string, body: Record<string, unknown>) =>
    gate.authorize(accessKeyId, dynamoDbAuthorizations(operation, body, ENV));
  const denial = (fn: string, action: string, resource: string, why = `because no identity-based policy allows the ${action} action`) =>
    `User: ${gate.principal(fn)!.sessionArn} is not authorized to perform: ${action} on resource: ${resource} ${why}`;

  it("names each function's session after its construct id, in the role the template gives it", () => {
    expect(gate.principal('Jwks')!.sessionArn).toMatch(/^arn:aws:sts::123456789012:assumed-role\/JwksRole[0-9A-F]{8}\/Jwks$/);
    expect(gate.principal('Jwks')!.roleArn).toMatch(/^arn:aws:iam::123456789012:role\/JwksRole[0-9A-F]{8}$/);
  });

  it('lets through requests of callers that are not functions of the stack', async () => {
    expect(gate.principal('local')).toBeUndefined();
    await expect(dynamo('local', 'DeleteTable', { TableName: 'modelgate-keys' })).resolves.toBeUndefined();
  });

  describe('dynamodb:LeadingKeys (the JWKS function reads SIGNING_KEY records only)', () => {
    it('allows a GetItem of a signing-key record and refuses one of an API key', async () => {
      await expect(dynamo('Jwks', 'GetItem', { TableName: 'modelgate-keys', Key: SIGNING_KEY_RECORD })).resolves.toBeUndefined();
      await expect(dynamo('Jwks', 'GetItem', { TableName: 'modelgate-keys', Key: API_KEY_RECORD })).resolves.toBe(denial('Jwks', 'dynamodb:GetItem', KEYS));
    });

    it('allows a Query of the SIGNING_KEY partition and refuses one of another', async () => {
      const query = (partition: string) => ({
        TableName: 'modelgate-keys',
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': { S: partition } },
      });
      await expect(dynamo('Jwks', 'Query', query('SIGNING_KEY'))).resolves.toBeUndefined();
      await expect(dynamo('Jwks', 'Query', query('ORG#1'))).resolves.toBe(denial('Jwks', 'dynamodb:Query', KEYS));
    });

    it('allows a BatchGetItem only when every key is in the SIGNING_KEY partition (ForAllValues)', async () => {
      const batch = (...keys: Record<string, unknown>[]) => ({ RequestItems: { 'modelgate-keys': { Keys: keys } } });
      await expect(dynamo('Jwks', 'BatchGetItem', batch(SIGNING_KEY_RECORD, { ...SIGNING_KEY_RECORD, sk: { S: 'kid-2' } }))).resolves.toBeUndefined();
      await expect(dynamo('Jwks', 'BatchGetItem', batch(SIGNING_KEY_RECORD, API_KEY_RECORD))).resolves.toBe(denial('Jwks', 'dynamodb:BatchGetItem', KEYS));
    });

    it('refuses a Scan, which names no partition and is not granted', async () => {
      await expect(dynamo('Jwks', 'Scan', { TableName: 'modelgate-keys' })).resolves.toBe(denial('Jwks', 'dynamodb:Scan', KEYS));
    });

    it("lets the token exchange write EVENT# and JTI# items of the policies table, and no issuer or policy", async () => {
      const put = (pk: string) => ({ TableName: 'modelgate-policies', Item: { pk: { S: pk }, sk: { S: 'x' } } });
      await expect(dynamo('TokenExchange', 'PutItem', put('EVENT#org-1'))).resolves.toBeUndefined();
      await expect(dynamo('TokenExchange', 'PutItem', put('JTI#issuer-1'))).resolves.toBeUndefined();
      await expect(dynamo('TokenExchange', 'PutItem', put('ISSUER#org-1'))).resolves.toBe(
        denial('TokenExchange', 'dynamodb:PutItem', 'arn:aws:dynamodb:us-east-1:123456789012:table/modelgate-policies'),
      );
    });
  });

  it('evaluates an index Query against <table>/index/<name>, granted only with the table', async () => {
    const byOrganization = (table: string) => ({
      TableName: table,
      IndexName: 'byOrganization',
      KeyConditionExpression: 'gsi1pk = :org',
      ExpressionAttributeValues: { ':org': { S: 'ORG#1' } },
    });
    await expect(dynamo('Catalog', 'Query', byOrganization('modelgate-usage'))).resolves.toBeUndefined();
    await expect(dynamo('Catalog', 'Query', byOrganization('modelgate-policies'))).resolves.toBe(
      denial('Catalog', 'dynamodb:Query', 'arn:aws:dynamodb:us-east-1:123456789012:table/modelgate-policies/index/byOrganization'),
    );
  });

  describe('KMS through the stand-in, with the key policy from the template', () => {
    let kms: KmsStandIn;
    let clients: KMSClient[];
    const client = (fn: StackFunctionId) => {
      const created = new KMSClient({ endpoint: kms.endpoint, region: 'eu-west-1', credentials: functionCredentials(fn), maxAttempts: 1 });
      clients.push(created);
      return created;
    };
    const sign = (fn: StackFunctionId, keyId: string) =>
      client(fn).send(new SignCommand({ KeyId: keyId, Message: Buffer.alloc(32, 1), MessageType: 'DIGEST', SigningAlgorithm: 'ECDSA_SHA_256' }));
    /** The stack's key in a stand-in whose gate evaluates `evaluated`. */
    async function standIn(evaluated: SynthesizedStack): Promise<{ gate: IamGate; keyArn: string }> {
      const kmsGate = new IamGate(evaluated);
      kms = await startKmsStandIn({ authorize: kmsGate.standInAuthorizer() });
      return { gate: kmsGate, keyArn: await createStackSigningKey(kms, kmsGate) };
    }
    /** The ARN the gate evaluates: the stand-in's key in the stack's account and region. */
    const inStack = (keyArn: string) => keyArn.replace('arn:aws:kms:eu-west-1:111122223333:', 'arn:aws:kms:us-east-1:123456789012:');

    beforeEach(() => {
      clients = [];
    });
    afterEach(async () => {
      for (const created of clients) created.destroy();
      await kms?.stop();
    });

    it('lets the token exchange sign with the stack key, and the registrar read its public key only', async () => {
      const { keyArn } = await standIn(stack);
      await expect(sign('tokenExchange', keyArn)).resolves.toMatchObject({ KeyId: keyArn, SigningAlgorithm: 'ECDSA_SHA_256' });
      await expect(client('signingKeyRegistrar').send(new GetPublicKeyCommand({ KeyId: keyArn }))).resolves.toMatchObject({ KeyId: keyArn });
      await expect(sign('signingKeyRegistrar', keyArn)).rejects.toMatchObject({
        name: 'AccessDeniedException',
        message: `User: ${gate.principal('SigningKeyRegistrar')!.sessionArn} is not authorized to perform: kms:Sign on resource: ${inStack(keyArn)} with an explicit deny in a resource-based policy`,
      });
    });

    it("refuses kms:Sign to another role by the key policy's Deny, even when an IAM policy grants it kms:* on every key", async () => {
      const broad = withRoleStatement(stack, 'Management', { Effect: 'Allow', Action: 'kms:*', Resource: '*' });
      const { gate: kmsGate, keyArn } = await standIn(broad);
      await expect(client('management').send(new GetPublicKeyCommand({ KeyId: keyArn }))).resolves.toMatchObject({ KeyId: keyArn });
      await expect(sign('management', keyArn)).rejects.toMatchObject({
        name: 'AccessDeniedException',
        message: `User: ${kmsGate.principal('Management')!.sessionArn} is not authorized to perform: kms:Sign on resource: ${inStack(keyArn)} with an explicit deny in a resource-based policy`,
      });
      expect(kmsGate.denials).toEqual([
        { fn: 'Management', action: 'kms:Sign', resource: inStack(keyArn), message: expect.stringContaining('with an explicit deny in a resource-based policy') },
      ]);
    });

    it("lets the token exchange sign with a rotated key tagged with the stack's name, and not with another stack's", async () => {
      const { gate: kmsGate } = await standIn(stack);
      const key = kmsGate.resources.find((resource) => resource.type === 'AWS::KMS::Key' && resource.keyUsage === 'SIGN_VERIFY')!;
      const rotated = await createRotatedSigningKey(kms, key.policy, { 'modelgate:access-token-signing': 'Modelgate' });
      const foreign = await createRotatedSigningKey(kms, key.policy, { 'modelgate:access-token-signing': 'Staging' });
      await expect(sign('tokenExchange', rotated)).resolves.toMatchObject({ KeyId: rotated });
      await expect(sign('tokenExchange', foreign)).rejects.toMatchObject({
        name: 'AccessDeniedException',
        message: `User: ${kmsGate.principal('TokenExchange')!.sessionArn} is not authorized to perform: kms:Sign on resource: ${inStack(foreign)} because no identity-based policy allows the kms:Sign action`,
      });
      // A rotated key keeps the stack key's Deny: no other role signs with it.
      await expect(sign('catalog', rotated)).rejects.toMatchObject({ name: 'AccessDeniedException', message: expect.stringContaining('with an explicit deny in a resource-based policy') });
    });
  });

  it('lets only the inference function read the provider credentials secret through the Secrets Manager stand-in', async () => {
    const secretsGate = new IamGate(stack);
    const secrets = await startSecretsManagerStandIn({ authorize: secretsGate.standInAuthorizer() });
    const clients: SecretsManagerClient[] = [];
    const read = (fn: StackFunctionId) => {
      const created = new SecretsManagerClient({ endpoint: secrets.endpoint, region: 'us-east-1', credentials: functionCredentials(fn), maxAttempts: 1 });
      clients.push(created);
      return created.send(new GetSecretValueCommand({ SecretId: arn }));
    };
    let arn = '';
    try {
      arn = await secrets.createSecret('provider-credentials', '{"*":"sk-test"}');
      const secret = secretsGate.resources.find((resource) => resource.type === 'AWS::SecretsManager::Secret')!;
      secretsGate.bind(secret.logicalId, { ref: arn, arn });
      await expect(read('inference')).resolves.toMatchObject({ SecretString: '{"*":"sk-test"}' });
      await expect(read('catalog')).rejects.toMatchObject({
        name: 'AccessDeniedException',
        message: `User: ${secretsGate.principal('Catalog')!.sessionArn} is not authorized to perform: secretsmanager:GetSecretValue on resource: ${arn} because no identity-based policy allows the secretsmanager:GetSecretValue action`,
      });
    } finally {
      for (const created of clients) created.destroy();
      await secrets.stop();
    }
  });

  it('records which actions each function used, on which resources', async () => {
    const recorder = new IamGate(stack);
    await recorder.authorize('Jwks', dynamoDbAuthorizations('GetItem', { TableName: 'modelgate-keys', Key: SIGNING_KEY_RECORD }, ENV));
    await recorder.authorize('Jwks', dynamoDbAuthorizations('GetItem', { TableName: 'modelgate-keys', Key: API_KEY_RECORD }, ENV));
    expect(recorder.seenActions()).toEqual({ Jwks: { 'dynamodb:GetItem': { allowed: 1, denied: 1, resources: [KEYS] } } });
    expect(recorder.denials).toEqual([{ fn: 'Jwks', action: 'dynamodb:GetItem', resource: KEYS, message: expect.stringContaining('is not authorized to perform: dynamodb:GetItem') }]);
  });
});
