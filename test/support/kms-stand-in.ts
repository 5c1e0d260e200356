import { createHash, generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { CreateKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import { signDigest } from './p256';
import { AwsJsonError, startAwsJsonServer } from './aws-json-server';

/**
 * A stand-in for AWS KMS on a loopback port, speaking its wire protocol (AWS JSON 1.1:
 * `POST /`, `X-Amz-Target: TrentService.<Operation>`, base64 blobs, errors as
 * `{"__type", "message"}`), so the real `@aws-sdk/client-kms` is what the tests exercise.
 *
 * It knows the operations the service uses, for ECC_NIST_P256 / SIGN_VERIFY keys:
 * `CreateKey` (with its policy and tags), `DescribeKey`, `GetKeyPolicy`, `ListResourceTags`, `GetPublicKey` (DER SPKI), `Sign` (ECDSA_SHA_256 over a RAW
 * message up to 4,096 bytes or a 32-byte DIGEST; DER signature) and `ScheduleKeyDeletion`.
 * It refuses what KMS refuses: a missing `KeyId`, an unknown or pending-deletion key, another
 * signing algorithm, a raw message over 4,096 bytes, a digest of the wrong length, an
 * unsigned request, and, through {@link KmsStandInOptions.authorize}, whatever the caller's
 * policies and the key policy do not allow (HTTP 400 `AccessDeniedException`). Keys are
 * addressed by id or ARN.
 *
 * @example
 * const kms = await startKmsStandIn();
 * const client = kms.client();                       // a real KMSClient pointed at it
 * const keyArn = await kms.createSigningKey();       // CreateKey through that client
 * const signer = new KmsSigner(client, keyArn, (await kmsPublicJwk(client, keyArn)).kid);
 * await kms.stop();
 */
export interface KmsStandIn {
  readonly endpoint: string;
  /** A real KMS client for this stand-in (static test credentials, region `eu-west-1`). */
  client(): KMSClient;
  /** Every request that reached an operation, in order (refused ones included): operation and parsed body. */
  readonly requests: readonly { operation: string; body: Record<string, unknown> }[];
  /** The ARN of a key created with `CreateKey`, by its key id. */
  arnOf(keyId: string): string;
  /** Creates an ECC_NIST_P256 / SIGN_VERIFY key through the SDK, as an operator would; returns its ARN. */
  createSigningKey(description?: string): Promise<string>;
  stop(): Promise<void>;
}

/**
 * A request as an authorizer sees it, the shape of the Secrets Manager stand-in's hook
 * (test/support/secrets-manager-stand-in.ts) with the key's own policy and tags, which IAM
 * evaluates with the caller's policies (test/support/iam/iam-gate.ts).
 */
export interface KmsStandInRequest {
  /** `kms:Sign` and so on: the IAM action. */
  readonly action: string;
  /** The access key id of the SigV4 credential scope. */
  readonly accessKeyId: string;
  /** The ARN of the key the request names, when it names an existing one. */
  readonly resource: string | undefined;
  /** That key's policy document (JSON). */
  readonly resourcePolicy?: string;
  /** That key's tags. */
  readonly resourceTags?: Readonly<Record<string, string>>;
  readonly body: Readonly<Record<string, unknown>>;
  readonly headers: IncomingHttpHeaders;
}

export interface KmsStandInOptions {
  /**
   * Decides each signed request: `true` to serve it, or the message of the AccessDeniedException
   * it gets. @default every request is allowed
   */
  authorize?: (request: KmsStandInRequest) => true | string | Promise<true | string>;
}

export const KMS_STAND_IN_REGION = 'eu-west-1';
const ACCOUNT = '111122223333';
const MAX_RAW_MESSAGE_BYTES = 4096;
const SIGNING_ALGORITHMS = ['ECDSA_SHA_256'];

interface StoredKey {
  keyId: string;
  arn: string;
  description: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
  created: number;
  state: 'Enabled' | 'PendingDeletion';
  /** The key policy document, as KMS keeps it (a default one when none was given). */
  policy: string;
  tags: { TagKey: string; TagValue: string }[];
}


export async function startKmsStandIn(options: KmsStandInOptions = {}): Promise<KmsStandIn> {
  const keys = new Map<string, StoredKey>();
  const requests: { operation: string; body: Record<string, unknown> }[] = [];
  const clients: KMSClient[] = [];

  const findKey = (body: Record<string, unknown>): StoredKey => {
    const keyId = body.KeyId;
    if (keyId === undefined || keyId === null) {
      throw new AwsJsonError('ValidationException', "1 validation error detected: Value null at 'keyId' failed to satisfy constraint: Member must not be null");
    }
    if (typeof keyId !== 'string' || keyId.length < 1 || keyId.length > 2048) {
      throw new AwsJsonError('ValidationException', "1 validation error detected: Value at 'keyId' failed to satisfy constraint: Member must have length between 1 and 2048");
    }
    const key = keys.get(keyId) ?? [...keys.values()].find((candidate) => candidate.arn === keyId);
    if (!key) throw new AwsJsonError('NotFoundException', `Key '${keyId.startsWith('arn:') ? keyId : `arn:aws:kms:${KMS_STAND_IN_REGION}:${ACCOUNT}:key/${keyId}`}' does not exist`);
    if (key.state === 'PendingDeletion') throw new AwsJsonError('KMSInvalidStateException', `${key.arn} is pending deletion.`);
    return key;
  };

  const metadata = (key: StoredKey) => ({
    AWSAccountId: ACCOUNT,
    Arn: key.arn,
    CreationDate: key.created,
    CustomerMasterKeySpec: 'ECC_NIST_P256',
    Description: key.description,
    Enabled: key.state === 'Enabled',
    KeyId: key.keyId,
    KeyManager: 'CUSTOMER',
    KeySpec: 'ECC_NIST_P256',
    KeyState: key.state,
    KeyUsage: 'SIGN_VERIFY',
    MultiRegion: false,
    Origin: 'AWS_KMS',
    SigningAlgorithms: SIGNING_ALGORITHMS,
  });

  const operations: Record<string, (body: Record<string, unknown>) => unknown> = {
    CreateKey(body) {
      if (body.KeySpec !== 'ECC_NIST_P256' || body.KeyUsage !== 'SIGN_VERIFY') {
        // The service signs with P-256 only; anything else is a test mistake, said plainly.
        throw new AwsJsonError('ValidationException', 'This KMS stand-in creates ECC_NIST_P256 keys with KeyUsage SIGN_VERIFY only');
      }
      const keyId = randomUUID();
      const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      const key: StoredKey = {
        keyId,
        arn: `arn:aws:kms:${KMS_STAND_IN_REGION}:${ACCOUNT}:key/${keyId}`,
        description: typeof body.Description === 'string' ? body.Description : '',
        privateKey,
        publicKey,
        created: Math.floor(Date.now() / 1000),
        state: 'Enabled',
        policy:
          typeof body.Policy === 'string'
            ? body.Policy
            : JSON.stringify({
                Version: '2012-10-17',
                Id: 'key-default-1',
                Statement: [{ Sid: 'Enable IAM User Permissions', Effect: 'Allow', Principal: { AWS: `arn:aws:iam::${ACCOUNT}:root` }, Action: 'kms:*', Resource: '*' }],
              }),
        tags: Array.isArray(body.Tags) ? (body.Tags as { TagKey: string; TagValue: string }[]).map(({ TagKey, TagValue }) => ({ TagKey, TagValue })) : [],
      };
      keys.set(keyId, key);
      return { KeyMetadata: metadata(key) };
    },
    DescribeKey(body) {
      const keyId = body.KeyId;
      const key = typeof keyId === 'string' ? (keys.get(keyId) ?? [...keys.values()].find((k) => k.arn === keyId)) : undefined;
      if (!key) return findKey(body);
      return { KeyMetadata: metadata(key) };
    },
    GetKeyPolicy(body) {
      const key = findKey(body);
      if (body.PolicyName !== undefined && body.PolicyName !== 'default') throw new AwsJsonError('NotFoundException', `No such policy: ${String(body.PolicyName)}`);
      return { Policy: key.policy, PolicyName: 'default' };
    },
    ListResourceTags(body) {
      return { Tags: findKey(body).tags, Truncated: false };
    },
    GetPublicKey(body) {
      const key = findKey(body);
      return {
        CustomerMasterKeySpec: 'ECC_NIST_P256',
        KeyId: key.arn,
        KeySpec: 'ECC_NIST_P256',
        KeyUsage: 'SIGN_VERIFY',
        PublicKey: key.publicKey.export({ format: 'der', type: 'spki' }).toString('base64'),
        SigningAlgorithms: SIGNING_ALGORITHMS,
      };
    },
    Sign(body) {
      const key = findKey(body);
      if (typeof body.Message !== 'string' || body.Message === '') {
        throw new AwsJsonError('ValidationException', "1 validation error detected: Value null at 'message' failed to satisfy constraint: Member must not be null");
      }
      const algorithm = body.SigningAlgorithm;
      if (typeof algorithm !== 'string') {
        throw new AwsJsonError('ValidationException', "1 validation error detected: Value null at 'signingAlgorithm' failed to satisfy constraint: Member must not be null");
      }
      if (!SIGNING_ALGORITHMS.includes(algorithm)) {
        throw new AwsJsonError('InvalidKeyUsageException', `You cannot use ${algorithm} with ${key.arn}: use one of ${SIGNING_ALGORITHMS.join(', ')}.`);
      }
      const message = Buffer.from(body.Message, 'base64');
      const messageType = body.MessageType ?? 'RAW';
      let digest: Buffer;
      if (messageType === 'RAW') {
        if (message.length > MAX_RAW_MESSAGE_BYTES) {
          throw new AwsJsonError('ValidationException', "1 validation error detected: Value at 'message' failed to satisfy constraint: Member must have length less than or equal to 4096");
        }
        digest = createHash('sha256').update(message).digest();
      } else if (messageType === 'DIGEST') {
        if (message.length !== 32) throw new AwsJsonError('ValidationException', `Digest is invalid length for algorithm ${algorithm}.`);
        digest = message;
      } else {
        throw new AwsJsonError('ValidationException', `1 validation error detected: Value '${String(messageType)}' at 'messageType' failed to satisfy constraint: Member must satisfy enum value set: [RAW, DIGEST]`);
      }
      const d = Buffer.from(key.privateKey.export({ format: 'jwk' }).d!, 'base64url');
      return { KeyId: key.arn, Signature: signDigest(digest, d).toString('base64'), SigningAlgorithm: algorithm };
    },
    ScheduleKeyDeletion(body) {
      const key = findKey(body);
      key.state = 'PendingDeletion';
      const days = typeof body.PendingWindowInDays === 'number' ? body.PendingWindowInDays : 30;
      return { KeyId: key.arn, DeletionDate: Math.floor(Date.now() / 1000) + days * 86400, KeyState: 'PendingDeletion', PendingWindowInDays: days };
    },
  };

  const { server, endpoint } = await startAwsJsonServer({
    targetPrefix: 'TrentService.',
    internalErrorType: 'KMSInternalException',
    operations,
    async before({ operation, accessKeyId, body, headers }) {
      requests.push({ operation, body });
      if (!options.authorize) return;
      const key = typeof body.KeyId === 'string' ? (keys.get(body.KeyId) ?? [...keys.values()].find((candidate) => candidate.arn === body.KeyId)) : undefined;
      const decision = await options.authorize({
        action: `kms:${operation}`,
        accessKeyId,
        resource: key?.arn,
        ...(key ? { resourcePolicy: key.policy, resourceTags: Object.fromEntries(key.tags.map(({ TagKey, TagValue }) => [TagKey, TagValue])) } : {}),
        body,
        headers,
      });
      if (decision !== true) throw new AwsJsonError('AccessDeniedException', decision);
    },
  });

  const newClient = (): KMSClient => {
    const client = new KMSClient({
      endpoint,
      region: KMS_STAND_IN_REGION,
      credentials: { accessKeyId: 'AKIDSTANDIN', secretAccessKey: 'stand-in-secret' },
      maxAttempts: 1,
    });
    clients.push(client);
    return client;
  };

  return {
    endpoint,
    requests,
    client: newClient,
    async createSigningKey(description) {
      const client = newClient();
      const { KeyMetadata } = await client.send(new CreateKeyCommand({ KeySpec: 'ECC_NIST_P256', KeyUsage: 'SIGN_VERIFY', Description: description }));
      return KeyMetadata!.Arn!;
    },
    arnOf(keyId) {
      const key = keys.get(keyId);
      if (!key) throw new Error(`no key ${keyId}`);
      return key.arn;
    },
    async stop() {
      for (const client of clients) client.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

