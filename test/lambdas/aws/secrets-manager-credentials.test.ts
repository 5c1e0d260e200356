import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { secretsManagerCredentials } from '../../../lambdas/aws/secrets-manager-credentials';
import { FixedClock } from '../../support/fixed-clock';

const SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:111122223333:secret:ProviderCredentials-AbCdEf';

/**
 * The Secrets Manager adapter with the real SDK client against a loopback stand-in speaking
 * the service's wire protocol (AWS JSON 1.1: `POST /`, `X-Amz-Target:
 * secretsmanager.GetSecretValue`, errors as `{"__type", "message"}`).
 */
describe('provider credentials from Secrets Manager', () => {
  let server: Server;
  let endpoint: string;
  let secretString: string | undefined = '{"*":"sk-provider-any","novita":"sk-provider-novita"}';
  const requests: { target: string | undefined; body: Record<string, unknown>; signed: boolean }[] = [];

  beforeAll(async () => {
    server = createServer((request, response) => {
      const parts: Buffer[] = [];
      request.on('data', (part: Buffer) => parts.push(part));
      request.on('end', () => {
        const body = JSON.parse(Buffer.concat(parts).toString() || '{}');
        requests.push({ target: request.headers['x-amz-target'] as string, body, signed: String(request.headers.authorization ?? '').startsWith('AWS4-HMAC-SHA256') });
        response.setHeader('Content-Type', 'application/x-amz-json-1.1');
        if (request.headers['x-amz-target'] !== 'secretsmanager.GetSecretValue' || body.SecretId !== SECRET_ARN || secretString === undefined) {
          response.statusCode = 400;
          response.end(JSON.stringify({ __type: 'ResourceNotFoundException', message: "Secrets Manager can't find the specified secret." }));
          return;
        }
        response.end(JSON.stringify({ ARN: SECRET_ARN, Name: 'ProviderCredentials', SecretString: secretString, VersionId: 'v1', CreatedDate: 1_700_000_000 }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const client = () =>
    new SecretsManagerClient({ endpoint, region: 'eu-west-1', credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' }, maxAttempts: 1 });

  it('reads the secret once per five minutes, by provider tag, provider or *', async () => {
    requests.length = 0;
    const clock = new FixedClock();
    const credentials = secretsManagerCredentials(client(), SECRET_ARN, clock);
    expect(await credentials.forProvider('novita/fp8')).toBe('sk-provider-novita');
    expect(await credentials.forProvider('openai')).toBe('sk-provider-any');
    expect(requests).toEqual([{ target: 'secretsmanager.GetSecretValue', body: { SecretId: SECRET_ARN }, signed: true }]);

    secretString = '{"*":"sk-provider-rotated"}';
    clock.advance(299_000);
    expect(await credentials.forProvider('openai')).toBe('sk-provider-any');
    clock.advance(1_000);
    expect(await credentials.forProvider('openai')).toBe('sk-provider-rotated');
    expect(requests).toHaveLength(2);
  });

  it('fails the request (and retries on the next) when the secret cannot be read, naming no secret', async () => {
    const credentials = secretsManagerCredentials(client(), `${SECRET_ARN}-gone`, new FixedClock());
    await expect(credentials.forProvider('openai')).rejects.toMatchObject({ name: 'ResourceNotFoundException' });
    const good = secretsManagerCredentials(client(), SECRET_ARN, new FixedClock());
    expect(await good.forProvider('openai')).toBe('sk-provider-rotated');
  });
});
