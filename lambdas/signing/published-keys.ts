import type { JWK } from 'jose';
import type { SigningKeyRecord } from './signer';

/**
 * docs/reference.md#verification-keys: the keys that may verify a live access token: every active key, and each
 * retired key until the longest-lived token it could have signed has expired.
 */
export function publishedKeys(records: readonly SigningKeyRecord[], now: Date, maxTokenLifetimeSeconds: number): { keys: JWK[] } {
  const horizon = now.getTime() - maxTokenLifetimeSeconds * 1000;
  const live = records.filter(
    (record) => record.status === 'active' || (record.retiredAt !== null && Date.parse(record.retiredAt) > horizon),
  );
  live.sort((a, b) => (a.status === b.status ? b.createdAt.localeCompare(a.createdAt) : a.status === 'active' ? -1 : 1));
  return {
    keys: live.map(({ publicJwk, kid }) => ({
      kty: publicJwk.kty,
      crv: publicJwk.crv,
      x: publicJwk.x,
      y: publicJwk.y,
      kid,
      alg: 'ES256',
      use: 'sig',
    })),
  };
}
