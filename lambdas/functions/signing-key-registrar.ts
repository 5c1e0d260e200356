import { KMSClient } from '@aws-sdk/client-kms';
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { kmsPublicJwk } from '../signing/kms-signer';
import { DynamoSigningKeyStore } from '../store/dynamo-signing-key-store';
import { buildDependencies } from './dependencies';

const deps = buildDependencies(process.env, ['keys']);
const kms = new KMSClient({});
const store = new DynamoSigningKeyStore(deps.documentClient, deps.config.tables.keys!);

/**
 * CloudFormation custom resource, run on deploy: records the KMS key's public JWK as the
 * active signing key, so the JWKS function publishes it without reading KMS. A new key ARN
 * retires the previous record; retired keys stay published until their tokens expire.
 */
export async function handler(event: CloudFormationCustomResourceEvent): Promise<{ PhysicalResourceId: string }> {
  const keyArn = event.ResourceProperties.KeyArn as string;
  if (event.RequestType === 'Delete') return { PhysicalResourceId: event.PhysicalResourceId };
  const { kid, publicJwk } = await kmsPublicJwk(kms, keyArn);
  const now = new Date().toISOString();
  const existing = await store.list();
  for (const record of existing) {
    if (record.kid !== kid && record.status === 'active') await store.put({ ...record, status: 'retired', retiredAt: now });
  }
  const current = existing.find((record) => record.kid === kid);
  if (!current || current.status !== 'active') {
    await store.put({ kid, keyRef: keyArn, publicJwk, status: 'active', createdAt: current?.createdAt ?? now, retiredAt: null });
  }
  return { PhysicalResourceId: kid };
}
