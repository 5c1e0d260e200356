import { NotFoundError, invalidParameter } from '../errors';

/**
 * Identifier shapes, checked where a request enters (path, query, body) so that a value
 * that cannot name anything never reaches a store: an over-long id would otherwise hit
 * DynamoDB's key-size limits and come back as a server error.
 *
 * Every identifier the service mints is a lowercase RFC 4122 UUID (`randomUUID`), and an
 * API key is named by the lowercase hex SHA-256 of its secret.
 */
export type IdShape = 'uuid' | 'key-hash';

const PATTERNS: Readonly<Record<IdShape, RegExp>> = Object.freeze({
  uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
  'key-hash': /^[0-9a-f]{64}$/,
});

const DESCRIPTIONS: Readonly<Record<IdShape, string>> = Object.freeze({
  uuid: 'a lowercase UUID',
  'key-hash': 'a key hash (64 lowercase hexadecimal characters)',
});

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && PATTERNS.uuid.test(value);
}

export function isKeyHash(value: unknown): value is string {
  return typeof value === 'string' && PATTERNS['key-hash'].test(value);
}

export function hasIdShape(value: unknown, shape: IdShape): value is string {
  return typeof value === 'string' && PATTERNS[shape].test(value);
}

/**
 * A path parameter that names a resource. A value of the wrong shape cannot exist, so it
 * is answered as any missing resource is (SPEC 7.1: 404), without echoing the value.
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

/** A field of a body or query that must hold an id: 400 naming the field otherwise. */
export function checkId(value: unknown, field: string, shape: IdShape): string {
  if (!hasIdShape(value, shape)) throw invalidParameter(field, `must be ${DESCRIPTIONS[shape]}`);
  return value;
}

/** An optional id field: absent stays `undefined`, anything else must have the shape. */
export function optionalId(body: Readonly<Record<string, unknown>>, field: string, shape: IdShape): string | undefined {
  const value = body[field];
  return value === undefined ? undefined : checkId(value, field, shape);
}

/** A list of ids; the error names the list and the position of the first bad item. */
export function checkIdList(values: readonly unknown[], field: string, shape: IdShape): string[] {
  values.forEach((value, i) => {
    if (!hasIdShape(value, shape)) throw invalidParameter(field, `item ${i} must be ${DESCRIPTIONS[shape]}`);
  });
  return values as string[];
}
