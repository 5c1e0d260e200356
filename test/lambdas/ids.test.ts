import { DomainError } from '../../lambdas/errors';
import { toErrorBody } from '../../lambdas/http/api-errors';
import { checkId, isKeyHash, isUuid, pathId } from '../../lambdas/ids';
import { validated } from '../../lambdas/openapi/request-validation';
import { bulkAssignKeysToGuardrailBody, createKeyBody } from '../../lambdas/openapi/validators/management.generated';

const UUID = '0b7d4c8e-3f1a-4e2b-9c6d-5a8f7e6d4c3b';
const HASH = 'a'.repeat(64);

function thrown(fn: () => unknown): { status: number; message: string; metadata: unknown } {
  try {
    fn();
  } catch (error) {
    if (error instanceof DomainError) return { status: toErrorBody(error).status, message: error.message, metadata: error.metadata };
    throw error;
  }
  throw new Error('expected an error');
}

describe('identifier shapes', () => {
  it('accepts the shapes the service mints and nothing longer, shorter or differently cased', () => {
    expect(isUuid(UUID)).toBe(true);
    expect(isUuid(UUID.toUpperCase())).toBe(false);
    expect(isUuid(`${UUID}0`)).toBe(false);
    expect(isUuid('x'.repeat(1100))).toBe(false);
    expect(isKeyHash(HASH)).toBe(true);
    expect(isKeyHash(HASH.slice(1))).toBe(false);
    expect(isKeyHash(`${HASH}\n`)).toBe(false);
    expect(isKeyHash(42)).toBe(false);
  });

  it('answers a path id that cannot exist as a missing resource, without echoing it', () => {
    expect(pathId({ id: UUID }, 'id', 'uuid', 'Workspace')).toBe(UUID);
    expect(thrown(() => pathId({ id: 'w'.repeat(1100) }, 'id', 'uuid', 'Workspace'))).toEqual({
      status: 404,
      message: 'Workspace not found',
      metadata: null,
    });
    expect(thrown(() => pathId(null, 'hash', 'key-hash', 'API key')).message).toBe('API key not found');
  });

  it('answers a body id of the wrong shape with a 400 naming the field', () => {
    expect(thrown(() => checkId('../x', 'workspace_id', 'uuid'))).toEqual({
      status: 400,
      message: 'Invalid workspace_id: must be a lowercase UUID',
      metadata: { parameter: 'workspace_id' },
    });
    // Ids in request bodies are checked by the bodies' schemas, in these shapes and words
    // (they were checked by optionalId and checkIdList, which are gone).
    expect(validated(createKeyBody, { name: 'k' })).toEqual({ name: 'k' });
    expect(thrown(() => validated(createKeyBody, { name: 'k', user_id: 7 })).status).toBe(400);
    expect(validated(bulkAssignKeysToGuardrailBody, { key_hashes: [HASH] })).toEqual({ key_hashes: [HASH] });
    expect(thrown(() => validated(bulkAssignKeysToGuardrailBody, { key_hashes: [HASH, 'f'.repeat(3000)] }))).toEqual({
      status: 400,
      message: 'Invalid key_hashes: item 1 must be a key hash (64 lowercase hexadecimal characters)',
      metadata: { parameter: 'key_hashes' },
    });
  });
});
