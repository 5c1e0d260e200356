import { COMPARE_WORK, CONTAINER_WEIGHT, MAP_ENTRY_WEIGHT, type ValueSize } from './condition-functions';
import { CONDITION_INPUT_BOUNDS } from './limits';

/**
 * The abstract values of the save-time bound (condition-cost.ts): what kind of value an
 * expression yields and how large it can be, what the meter weighs such a value, and how shapes
 * meet where an expression can yield either of two.
 */

/** The abstract value of an expression: its kind and the largest size it can have. */
export type Shape =
  | { kind: 'scalar' }
  | { kind: 'string'; length: number }
  /** `characters`, when known, bounds the sum of the lengths of a list of strings. */
  | { kind: 'list'; count: number; element: Shape; characters?: number }
  | { kind: 'map'; count: number; key: Shape; value: Shape };

/** A condition the estimator cannot bound, or whose bound exceeds the budget. */
export class ConditionCostError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConditionCostError';
  }
}

/** The shape of a number, a bool or null: its size never matters. */
export const SCALAR: Shape = Object.freeze({ kind: 'scalar' });
/** `string(x)` of a number or a bool: the longest is a double's exponent form. */
export const NUMBER_TEXT_LENGTH = 32;

/** The four variables at their largest (docs/reference.md#limits, and what a 16 KB subject token can carry). */
export function variableShapes(): Record<string, Shape> {
  const { subjectLength, audienceCount, audienceLength, claimCharacters, scopesCount, scopeLength } = CONDITION_INPUT_BOUNDS;
  return {
    subject: { kind: 'string', length: subjectLength },
    audience: { kind: 'list', count: audienceCount, element: { kind: 'string', length: audienceLength }, characters: claimCharacters },
    scopes: { kind: 'list', count: scopesCount, element: { kind: 'string', length: scopeLength } },
    token_type: { kind: 'string', length: claimCharacters },
  };
}

/** The weight the meter charges for a value of this shape: its elements and characters, and each list or map. */
export function weight(shape: Shape): number {
  switch (shape.kind) {
    case 'scalar':
      return 1;
    case 'string':
      return 1 + shape.length;
    case 'list':
      if (shape.element.kind === 'string') return CONTAINER_WEIGHT + shape.count + Math.min(shape.characters ?? Infinity, shape.count * shape.element.length);
      return CONTAINER_WEIGHT + shape.count * weight(shape.element);
    case 'map':
      // A map names its keys as strings: a number's text.
      return CONTAINER_WEIGHT + shape.count * (MAP_ENTRY_WEIGHT + (shape.key.kind === 'scalar' ? 1 + NUMBER_TEXT_LENGTH : weight(shape.key)) + weight(shape.value));
  }
}

/** The lists and maps a value of this shape holds, itself included. */
export function containers(shape: Shape): number {
  if (shape.kind === 'list') return 1 + shape.count * containers(shape.element);
  if (shape.kind === 'map') return 1 + shape.count * containers(shape.value);
  return 0;
}

/** What `==`, `!=` or `in` compares beyond the operands' weights: each pair of lists or maps (condition-meter.ts). */
export function comparisonWork(op: string, left: Shape, right: Shape): number {
  if (op !== 'in') return COMPARE_WORK * Math.max(0, Math.min(containers(left), containers(right)) - 1);
  if (right.kind !== 'list') return 0;
  return COMPARE_WORK * Math.min(containers(left) * right.count, containers(right) - 1);
}

/** Bytes a freshly built value of this shape occupies (strings in UTF-16, 8 bytes a slot). */
export function built(shape: Shape): number {
  switch (shape.kind) {
    case 'scalar':
      return 0;
    case 'string':
      return 2 * shape.length;
    case 'list':
      return 8 * shape.count;
    case 'map':
      return 16 * shape.count;
  }
}

/** The largest size a value of this shape has, as a call's charge reads it. */
export function sizeOf(shape: Shape): ValueSize {
  switch (shape.kind) {
    case 'string':
      return { kind: 'string', characters: shape.length, count: 1 };
    case 'list': {
      const characters = shape.element.kind === 'string' ? Math.min(shape.characters ?? Infinity, shape.count * shape.element.length) : 0;
      return { kind: 'list', characters, count: shape.count };
    }
    case 'map':
      return { kind: 'map', characters: 0, count: shape.count };
    case 'scalar':
      return { kind: 'other', characters: 0, count: 1 };
  }
}

/** The shape of a literal; `bytes` are not available in conditions. */
export function literalShape(value: unknown): Shape {
  if (typeof value === 'string') return { kind: 'string', length: value.length };
  if (value instanceof Uint8Array) return unsupported('bytes');
  return SCALAR;
}

/** The element of an empty list literal: joins with anything. */
const NOTHING: Shape = Object.freeze({ kind: 'string', length: 0 });

/**
 * The smallest shape that bounds both, where an expression can yield either (a conditional, a
 * list's elements); values of different kinds in one place are not available.
 * @example join({ kind: 'string', length: 3 }, { kind: 'string', length: 8 }) // { kind: 'string', length: 8 }
 */
export function join(a: Shape, b: Shape): Shape {
  if (a === NOTHING) return b;
  if (b === NOTHING) return a;
  if (a.kind === 'string' && b.kind === 'string') return { kind: 'string', length: Math.max(a.length, b.length) };
  if (a.kind === 'list' && b.kind === 'list') {
    const shape: Shape = { kind: 'list', count: Math.max(a.count, b.count), element: join(a.element, b.element) };
    if (a.characters !== undefined && b.characters !== undefined) shape.characters = Math.max(a.characters, b.characters);
    return shape;
  }
  if (a.kind === 'map' && b.kind === 'map') return { kind: 'map', count: Math.max(a.count, b.count), key: join(a.key, b.key), value: join(a.value, b.value) };
  if (a.kind === 'scalar' && b.kind === 'scalar') return SCALAR;
  return unsupported('values of different types in one place');
}

/** The shape that bounds every one of `shapes` (an empty list's element for none). */
export function joinAll(shapes: Shape[]): Shape {
  return shapes.reduce(join, NOTHING);
}

/** Refuses a construct the bound cannot count, naming it. */
export function unsupported(what: string): never {
  throw new ConditionCostError(`${what} is not available in conditions`);
}
