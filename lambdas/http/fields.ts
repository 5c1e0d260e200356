import { invalidParameter } from '../errors';

/**
 * Readers for fields of a parsed JSON body. Each throws a 400 naming the field, so a
 * handler states what it accepts in one line per field.
 */
type Body = Record<string, unknown>;

export function optionalString(body: Body, name: string, maxLength = 256): string | undefined {
  const value = body[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.trim() === '') throw invalidParameter(name, 'must be a non-empty string');
  if (value.length > maxLength) throw invalidParameter(name, `must be at most ${maxLength} characters`);
  return value;
}

export function requiredString(body: Body, name: string, maxLength = 256): string {
  const value = optionalString(body, name, maxLength);
  if (value === undefined) throw invalidParameter(name, 'is required');
  return value;
}

export function nullableString(body: Body, name: string, maxLength = 1000): string | null | undefined {
  if (body[name] === null) return null;
  return optionalString(body, name, maxLength);
}

export function optionalBoolean(body: Body, name: string): boolean | undefined {
  const value = body[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') throw invalidParameter(name, 'must be a boolean');
  return value;
}

export function optionalNumber(body: Body, name: string): number | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value)) throw invalidParameter(name, 'must be a number');
  return value;
}

export function optionalInteger(body: Body, name: string, min = Number.MIN_SAFE_INTEGER): number | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    throw invalidParameter(name, min === Number.MIN_SAFE_INTEGER ? 'must be an integer' : `must be an integer of at least ${min}`);
  }
  return value;
}

/** An array of non-empty strings, `null`, or absent (`undefined`). */
export function nullableStringList(body: Body, name: string, maxItems = 1000): string[] | null | undefined {
  const value = body[name];
  if (value === undefined || value === null) return value;
  if (!Array.isArray(value) || value.some((item) => typeof item !== 'string' || item.trim() === '')) {
    throw invalidParameter(name, 'must be an array of non-empty strings or null');
  }
  if (value.length > maxItems) throw invalidParameter(name, `must have at most ${maxItems} items`);
  return [...new Set(value as string[])];
}

export function requiredStringList(body: Body, name: string, maxItems = 1000): string[] {
  const value = nullableStringList(body, name, maxItems);
  if (!value || value.length === 0) throw invalidParameter(name, 'must be a non-empty array of strings');
  return value;
}

export function oneOf<T extends string>(body: Body, name: string, allowed: readonly T[]): T | undefined {
  const value = body[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !allowed.includes(value as T)) {
    throw invalidParameter(name, `must be one of ${allowed.join(', ')}`);
  }
  return value as T;
}

/** Rejects fields the endpoint does not know, so a typo is not silently ignored. */
export function rejectUnknownFields(body: Body, known: readonly string[]): void {
  for (const name of Object.keys(body)) {
    if (!known.includes(name)) throw invalidParameter(name, 'is not a known field');
  }
}
