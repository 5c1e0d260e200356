import { GetSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { Clock } from '../clock';
import { CachedProviderCredentials } from '../inference/provider-credentials';
import type { ProviderCredentials } from '../inference/upstream';

/**
 * Provider credentials from the stack's Secrets Manager secret (a JSON object of provider
 * to API key), read at most every five minutes per container.
 */
export function secretsManagerCredentials(client: SecretsManagerClient, secretArn: string, clock: Clock): ProviderCredentials {
  return new CachedProviderCredentials(
    async () => (await client.send(new GetSecretValueCommand({ SecretId: secretArn }))).SecretString,
    clock,
    300,
  );
}
