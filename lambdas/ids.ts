import { NotFoundError, invalidParameter } from './errors';

/**
 * Identifier shapes, checked where a request enters (path, query, body) so that a value
 * that cannot name anything never reaches a store: an over-long id would otherwise hit
 * DynamoDB's key-size limits and come back as a server error.
 *
 * Every identifier the service mints is a lowercase RFC 4122 UUID (`randomUUID`), and an
 * API key is named by the lowercase hex SHA-256 of its secret.
 */
export type IdShape = 'uuid' | 'key-hash';

/** The shapes; the request schemas use them too (`format: uuid`, the key hash `pattern`). */
export const ID_PATTERNS: Readonly<Record<IdShape, RegExp>> = Object.freeze({
  uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
  'key-hash': /^[0-9a-f]{64}$/,
});

/** What a refusal says a value must be, for each shape. */
export const ID_DESCRIPTIONS: Readonly<Record<IdShape, string>> = Object.freeze({
  uuid: 'a lowercase UUID',
  'key-hash': 'a key hash (64 lowercase hexadecimal characters)',
});

/** Whether `value` is a lowercase UUID, the shape of every id the service mints. */
export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && ID_PATTERNS.uuid.test(value);
}

/** Whether `value` is an API key's name: the lowercase hex SHA-256 of its secret. */
export function isKeyHash(value: unknown): value is string {
  return typeof value === 'string' && ID_PATTERNS['key-hash'].test(value);
}

/** Whether `value` has the identifier shape `shape`. */
export function hasIdShape(value: unknown, shape: IdShape): value is string {
  return typeof value === 'string' && ID_PATTERNS[shape].test(value);
}

/**
 * A path parameter that names a resource. A value of the wrong shape cannot exist, so it
 * is answered as any missing resource is (docs/reference.md#the-common-error-body: 404), without echoing the value.
 *
 * @example pathId(event.pathParameters, 'id', 'uuid', 'Workspace')
 */
export function pathId(
  params: Readonly<Record<string, string | undefined>> | null | undefined,
  name: string,
  shape: IdShape,
  what: string,
): string {
  const value = params?.[name];
  if (!hasIdShape(value, shape)) throw new NotFoundError(`${what} not found`);
  return value;
}

/**
 * A value that must hold an id: 400 naming the field otherwise. Request bodies and query
 * strings are checked by their schemas (`format: uuid`, the key hash pattern, with these
 * reasons); this is for input that comes another way (the operator CLI).
 */
export function checkId(value: unknown, field: string, shape: IdShape): string {
  if (!hasIdShape(value, shape)) throw invalidParameter(field, `must be ${ID_DESCRIPTIONS[shape]}`);
  return value;
}
