import { createHash, randomBytes } from 'node:crypto';

/** Every secret starts with this, so scanners and people recognise a leaked key. */
export const API_KEY_PREFIX = 'sk-mg-v1-';

const KEY_PATTERN = /^sk-mg-v1-[0-9a-f]{64}$/;

/** A source of random bytes (`crypto.randomBytes`, or a fixed one in tests). */
export type RandomBytes = (size: number) => Buffer;

/** A freshly generated key: its secret, the hash it is stored under, and the label shown for it. */
export interface NewApiKeySecret {
  /** Shown once at creation, never stored. */
  secret: string;
  /** SHA-256 of the secret: the key's identifier and the only form stored. */
  hash: string;
  label: string;
}

/** A new 256-bit secret. SHA-256 suffices for storage: the secret has full entropy. */
export function generateApiKey(random: RandomBytes = randomBytes): NewApiKeySecret {
  const secret = `${API_KEY_PREFIX}${random(32).toString('hex')}`;
  return { secret, hash: hashApiKey(secret), label: labelFor(secret) };
}

/** The key's stored identifier: the hex SHA-256 of its secret. */
export function hashApiKey(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** Whether a credential has the shape of an API key secret (`sk-mg-v1-` and 64 hex digits). */
export function isApiKeyFormat(value: string): boolean {
  return KEY_PATTERN.test(value);
}

function labelFor(secret: string): string {
  return `${secret.slice(0, API_KEY_PREFIX.length + 3)}...${secret.slice(-4)}`;
}
