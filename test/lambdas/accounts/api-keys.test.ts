import { createHash } from 'node:crypto';
import { API_KEY_PREFIX, generateApiKey, hashApiKey, isApiKeyFormat } from '../../../lambdas/accounts/api-keys';

describe('API key secrets', () => {
  it('generates a prefixed 256-bit secret whose SHA-256 is its identifier', () => {
    const bytes = Buffer.alloc(32, 0xab);
    const key = generateApiKey(() => bytes);
    expect(key.secret).toBe(`${API_KEY_PREFIX}${'ab'.repeat(32)}`);
    expect(key.hash).toBe(createHash('sha256').update(key.secret).digest('hex'));
    expect(key.label).toBe('sk-mg-v1-aba...abab');
    expect(key.label).not.toContain(key.secret.slice(12, -4));
  });

  it('never generates the same secret twice', () => {
    const secrets = new Set(Array.from({ length: 200 }, () => generateApiKey().secret));
    expect(secrets.size).toBe(200);
  });

  it.each([
    ['sk-mg-v1-' + 'a'.repeat(64), true],
    ['sk-mg-v1-' + 'a'.repeat(63), false],
    ['sk-mg-v1-' + 'A'.repeat(64), false],
    ['sk-or-v1-' + 'a'.repeat(64), false],
    ['', false],
  ])('recognises %p as a key: %p', (value, expected) => {
    expect(isApiKeyFormat(value)).toBe(expected);
  });

  it('hashes deterministically', () => {
    expect(hashApiKey('x')).toBe(hashApiKey('x'));
    expect(hashApiKey('x')).not.toBe(hashApiKey('y'));
  });
});
