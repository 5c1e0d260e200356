import type { Clock } from '../clock';
import type { SigningKeyRecord, SigningKeyStore } from './signer';

/**
 * How long a container serves the signing-key records it read last on `GET /oauth/jwks`: a key
 * set is then one read per container every few seconds, not one per request, whatever the rate
 * (the records' partition is the one every token verification and exchange reads). A key a
 * rotation adds is published within this time (docs/workload-identity.md, "Signing keys and
 * rotation").
 */
export const PUBLISHED_KEYS_CACHE_SECONDS = 5;

/**
 * The signing-key records as `list` read them, kept for `seconds`; concurrent requests share one
 * read, and a failed re-read serves the records read before (they were published a moment ago).
 */
export function cachedSigningKeys(store: Pick<SigningKeyStore, 'list'>, clock: Clock, seconds = PUBLISHED_KEYS_CACHE_SECONDS): Pick<SigningKeyStore, 'list'> {
  let held: { records: SigningKeyRecord[]; readAt: number } | undefined;
  let reading: Promise<SigningKeyRecord[]> | undefined;
  const read = async (now: number): Promise<SigningKeyRecord[]> => {
    try {
      const records = await store.list();
      held = { records, readAt: now };
      return records;
    } catch (error) {
      if (held) return held.records;
      throw error;
    }
  };
  return {
    list: async () => {
      const now = clock.now().getTime();
      if (held && now - held.readAt < seconds * 1000) return held.records;
      reading ??= read(now).finally(() => {
        reading = undefined;
      });
      return reading;
    },
  };
}
