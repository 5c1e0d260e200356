import { publishedKeys } from '../../../lambdas/signing/published-keys';
import type { SigningKeyRecord } from '../../../lambdas/signing/signer';

const record = (kid: string, status: SigningKeyRecord['status'], createdAt: string, retiredAt: string | null = null): SigningKeyRecord => ({
  kid,
  keyRef: `arn:${kid}`,
  publicJwk: { kty: 'EC', crv: 'P-256', x: `x-${kid}`, y: `y-${kid}`, d: 'private-part-never-published' },
  status,
  createdAt,
  retiredAt,
});

describe('publishedKeys (docs/reference.md#verification-keys)', () => {
  const now = new Date('2026-11-21T12:00:00Z');

  it('publishes active keys first, and retired keys only while a token they signed may live', () => {
    const records = [
      record('old', 'retired', '2026-01-01T00:00:00Z', '2026-11-21T11:44:59Z'),
      record('recent', 'retired', '2026-06-01T00:00:00Z', '2026-11-21T11:50:00Z'),
      record('current', 'active', '2026-11-21T11:50:00Z'),
    ];
    const { keys } = publishedKeys(records, now, 900);
    expect(keys.map((k) => k.kid)).toEqual(['current', 'recent']);
    expect(keys[0]).toEqual({ kty: 'EC', crv: 'P-256', x: 'x-current', y: 'y-current', kid: 'current', alg: 'ES256', use: 'sig' });
    expect(JSON.stringify(keys)).not.toContain('private-part');
  });

  it('publishes nothing when there are no keys', () => {
    expect(publishedKeys([], now, 900)).toEqual({ keys: [] });
  });
});
