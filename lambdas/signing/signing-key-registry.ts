import type { JWK } from 'jose';
import type { Clock } from '../clock';
import type { SigningKeyRecord, SigningKeyStore } from './signer';

/** A key to sign with from now on: its id, where it lives, and its public half. */
export interface SigningKeyRegistration {
  kid: string;
  /** KMS key ARN in AWS, or the local key file's name. */
  keyRef: string;
  publicJwk: JWK;
}

/** What a registration did: the active record, those it retired, and whether it wrote anything. */
export interface RegistrationResult {
  /** The record that now signs. */
  active: SigningKeyRecord;
  /** Records that stopped signing by this registration (still published, docs/reference.md#verification-keys). */
  retired: SigningKeyRecord[];
  /** False when the key was already the active one and nothing was written. */
  changed: boolean;
}

/**
 * Makes `key` the one signing key: its record becomes active and every other active record
 * is retired as of now. Retired keys stay in the store, so JWKS keeps publishing them until
 * every token they signed has expired (docs/reference.md#verification-keys).
 *
 * The one code path for first registration, rotation and rollback: the deploy-time
 * registrar, the local runtime and the rotate command all call it. Idempotent: registering
 * the active key again writes nothing. The new record is written before the old ones are
 * retired, so there is never a moment without an active key.
 */
export async function registerSigningKey(store: SigningKeyStore, key: SigningKeyRegistration, clock: Clock): Promise<RegistrationResult> {
  const now = clock.now().toISOString();
  const existing = await store.list();
  const current = existing.find((record) => record.kid === key.kid);
  const others = existing.filter((record) => record.kid !== key.kid && record.status === 'active');
  if (current?.status === 'active' && current.keyRef === key.keyRef && others.length === 0) {
    return { active: current, retired: [], changed: false };
  }
  const active: SigningKeyRecord = {
    kid: key.kid,
    keyRef: key.keyRef,
    publicJwk: key.publicJwk,
    status: 'active',
    // A key brought back (a rolled-back rotation) keeps its original creation time.
    createdAt: current?.createdAt ?? now,
    retiredAt: null,
  };
  await store.put(active);
  const retired = others.map((record): SigningKeyRecord => ({ ...record, status: 'retired', retiredAt: now }));
  for (const record of retired) await store.put(record);
  return { active, retired, changed: true };
}

/**
 * What a deployment says of the stack's key (the `Custom::SigningKeyRegistration` event):
 * - `created`: the resource is created (a new stack, or a replaced resource);
 * - `changed`: an update names another key than before (a new stack key, or a rollback to the
 *   previous one);
 * - `unchanged`: an update names the same key (another property changed, such as the provider's
 *   service token after a CDK upgrade).
 */
export type DeployedKeyChange = 'created' | 'changed' | 'unchanged';

/**
 * The deploy-time registration of the stack's key. A deployment never takes signing away from a
 * key that `signing-key rotate` brought in after the stack's key: the newer key stays active.
 * - `changed`: the named key becomes active, as in any rotation; the key it replaces is retired
 *   and stays published (a new KMS key is the newest key there is; a rollback returns to the key
 *   that signed before the failed update).
 * - `created`, `unchanged`: a key that is already recorded becomes active again only when no key
 *   rotated in after it is active; an unknown key is registered and becomes active.
 */
export async function registerDeployedSigningKey(
  store: SigningKeyStore,
  key: SigningKeyRegistration,
  change: DeployedKeyChange,
  clock: Clock,
): Promise<RegistrationResult> {
  if (change !== 'changed') {
    const existing = await store.list();
    const recorded = existing.find((record) => record.kid === key.kid);
    const newer = recorded && existing.find((record) => record.status === 'active' && record.kid !== key.kid && record.createdAt > recorded.createdAt);
    if (newer) return { active: newer, retired: [], changed: false };
  }
  return registerSigningKey(store, key, clock);
}

/**
 * Stops `kid` from signing, as of now, keeping it published until its tokens expire. A key
 * that is unknown or already retired is left as it is: its retirement time must not move.
 */
export async function retireSigningKey(store: SigningKeyStore, kid: string, clock: Clock): Promise<SigningKeyRecord | undefined> {
  const record = (await store.list()).find((candidate) => candidate.kid === kid);
  if (!record || record.status !== 'active') return undefined;
  const retired: SigningKeyRecord = { ...record, status: 'retired', retiredAt: clock.now().toISOString() };
  await store.put(retired);
  return retired;
}
