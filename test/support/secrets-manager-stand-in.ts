import { randomBytes, randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { CreateSecretCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { AwsJsonError, startAwsJsonServer } from './aws-json-server';

/**
 * A stand-in for AWS Secrets Manager on a loopback port, speaking its wire protocol (AWS JSON
 * 1.1: `POST /`, `X-Amz-Target: secretsmanager.<Operation>`, errors as `{"__type", "message"}`),
 * so the real `@aws-sdk/client-secrets-manager` is what the tests exercise.
 *
 * It knows string secrets: `CreateSecret`, `PutSecretValue`, `GetSecretValue` (the current
 * version, or one named by `VersionId` or `VersionStage`) and `DescribeSecret`. A secret is
 * addressed by name, by its full ARN, or by its ARN without the 6-character suffix, as in AWS.
 * It refuses an unsigned request and, through {@link SecretsManagerStandInOptions.authorize},
 * whatever the caller's policies do not allow (HTTP 400 `AccessDeniedException`).
 *
 * @example
 * const secrets = await startSecretsManagerStandIn();
 * const arn = await secrets.createSecret('provider-keys', '{"*":"sk-test"}');
 * // a function process: AWS_ENDPOINT_URL_SECRETS_MANAGER=secrets.endpoint
 * await secrets.stop();
 */
export interface SecretsManagerStandIn {
  readonly endpoint: string;
  /** A real Secrets Manager client for this stand-in (static test credentials). */
  client(): SecretsManagerClient;
  /** Every request that reached an operation, in order (refused ones included). */
  readonly requests: readonly StandInRequest[];
  /** Creates a secret through the SDK, as CloudFormation or an operator would; returns its ARN. */
  createSecret(name: string, secretString: string, description?: string): Promise<string>;
  stop(): Promise<void>;
}

/** A request as an authorizer sees it: who signed it, and what it asks for. */
export interface StandInRequest {
  /** `secretsmanager:GetSecretValue` and so on: the IAM action. */
  readonly action: string;
  /** The access key id of the SigV4 credential scope (the calling function's, in the bundle tests). */
  readonly accessKeyId: string;
  /** The ARN of the secret the request names, when it names an existing one. */
  readonly resource: string | undefined;
  readonly body: Readonly<Record<string, unknown>>;
  readonly headers: IncomingHttpHeaders;
}

/** `true` to allow, or the reason for the denial (AWS says which action on which resource). */
export type Authorize = (request: StandInRequest) => true | string | Promise<true | string>;

export interface SecretsManagerStandInOptions {
  /** @default 'us-east-1' */
  region?: string;
  /** @default '123456789012' */
  account?: string;
  /** Decides each signed request. @default every request is allowed */
  authorize?: Authorize;
}

interface SecretVersion {
  versionId: string;
  secretString: string;
  stages: string[];
  created: number;
}

interface StoredSecret {
  arn: string;
  name: string;
  description: string;
  created: number;
  versions: SecretVersion[];
}


const NOT_FOUND = "Secrets Manager can't find the specified secret.";

export async function startSecretsManagerStandIn(options: SecretsManagerStandInOptions = {}): Promise<SecretsManagerStandIn> {
  const region = options.region ?? 'us-east-1';
  const account = options.account ?? '123456789012';
  const secrets = new Map<string, StoredSecret>();
  const requests: StandInRequest[] = [];
  const clients: SecretsManagerClient[] = [];

  const find = (secretId: unknown): StoredSecret | undefined => {
    if (typeof secretId !== 'string') return undefined;
    for (const secret of secrets.values()) {
      // A partial ARN leaves out the 6 random characters CloudFormation and the console add.
      if (secret.name === secretId || secret.arn === secretId || secret.arn.slice(0, -7) === secretId) return secret;
    }
    return undefined;
  };
  const existing = (body: Record<string, unknown>): StoredSecret => {
    if (typeof body.SecretId !== 'string' || body.SecretId === '') {
      throw new AwsJsonError('ValidationException', "1 validation error detected: Value null at 'secretId' failed to satisfy constraint: Member must not be null");
    }
    const secret = find(body.SecretId);
    if (!secret) throw new AwsJsonError('ResourceNotFoundException', NOT_FOUND);
    return secret;
  };
  const addVersion = (secret: StoredSecret, secretString: string, token: unknown): SecretVersion => {
    for (const version of secret.versions) {
      version.stages = version.stages.filter((stage) => stage !== 'AWSPREVIOUS').map((stage) => (stage === 'AWSCURRENT' ? 'AWSPREVIOUS' : stage));
    }
    const version = { versionId: typeof token === 'string' ? token : randomUUID(), secretString, stages: ['AWSCURRENT'], created: Date.now() / 1000 };
    secret.versions.push(version);
    return version;
  };

  const operations: Record<string, (body: Record<string, unknown>) => unknown> = {
    CreateSecret(body) {
      if (typeof body.Name !== 'string' || !/^[A-Za-z0-9/_+=.@-]{1,512}$/.test(body.Name)) {
        throw new AwsJsonError('ValidationException', 'Invalid name. Must be a valid name containing alphanumeric characters, or any of the following: -/_+=.@!');
      }
      if (find(body.Name)) throw new AwsJsonError('ResourceExistsException', `The operation failed because the secret ${body.Name} already exists.`);
      const suffix = randomBytes(6).toString('base64').replace(/[^A-Za-z0-9]/g, 'x').slice(0, 6);
      const secret: StoredSecret = {
        arn: `arn:aws:secretsmanager:${region}:${account}:secret:${body.Name}-${suffix}`,
        name: body.Name,
        description: typeof body.Description === 'string' ? body.Description : '',
        created: Date.now() / 1000,
        versions: [],
      };
      secrets.set(secret.arn, secret);
      const version = typeof body.SecretString === 'string' ? addVersion(secret, body.SecretString, body.ClientRequestToken) : undefined;
      return { ARN: secret.arn, Name: secret.name, ...(version ? { VersionId: version.versionId } : {}) };
    },
    PutSecretValue(body) {
      const secret = existing(body);
      if (typeof body.SecretString !== 'string') throw new AwsJsonError('InvalidRequestException', 'You must provide either SecretString or SecretBinary.');
      const version = addVersion(secret, body.SecretString, body.ClientRequestToken);
      return { ARN: secret.arn, Name: secret.name, VersionId: version.versionId, VersionStages: version.stages };
    },
    GetSecretValue(body) {
      const secret = existing(body);
      const version =
        typeof body.VersionId === 'string'
          ? secret.versions.find((candidate) => candidate.versionId === body.VersionId)
          : secret.versions.find((candidate) => candidate.stages.includes(typeof body.VersionStage === 'string' ? body.VersionStage : 'AWSCURRENT'));
      if (!version) throw new AwsJsonError('ResourceNotFoundException', "Secrets Manager can't find the specified secret value for the given version.");
      return {
        ARN: secret.arn,
        Name: secret.name,
        VersionId: version.versionId,
        SecretString: version.secretString,
        VersionStages: version.stages,
        CreatedDate: version.created,
      };
    },
    DescribeSecret(body) {
      const secret = existing(body);
      return {
        ARN: secret.arn,
        Name: secret.name,
        Description: secret.description,
        CreatedDate: secret.created,
        VersionIdsToStages: Object.fromEntries(secret.versions.map((version) => [version.versionId, version.stages])),
      };
    },
  };

  const { server, endpoint } = await startAwsJsonServer({
    targetPrefix: 'secretsmanager.',
    internalErrorType: 'InternalServiceError',
    operations,
    async before({ operation, accessKeyId, body, headers }) {
      const named = find(body.SecretId ?? body.Name);
      const seen: StandInRequest = { action: `secretsmanager:${operation}`, accessKeyId, resource: named?.arn, body, headers };
      requests.push(seen);
      const decision = options.authorize ? await options.authorize(seen) : true;
      if (decision !== true) throw new AwsJsonError('AccessDeniedException', decision);
    },
  });

  const newClient = (): SecretsManagerClient => {
    const client = new SecretsManagerClient({
      endpoint,
      region,
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
    async createSecret(name, secretString, description) {
      const { ARN } = await newClient().send(new CreateSecretCommand({ Name: name, SecretString: secretString, Description: description }));
      return ARN!;
    },
    async stop() {
      for (const client of clients) client.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

