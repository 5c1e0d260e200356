/**
 * What each function a condition may call costs, in work units (docs/reference.md#conditions,
 * limits.ts): the one table the save-time bound (condition-cost.ts) reads at the largest sizes an
 * exchange admits, and the run-time meter (condition-meter.ts) at each call's, before it runs.
 *
 * A work unit costs about the same time whatever spends it (0.6 ns on the bench's machine; a node
 * evaluated is {@link CONDITION_STEP_WORK} units). Each charge is the function's measured worst
 * case on the largest inputs, not its typical one (V8's n·m substring search, case changes of `ﬃ`
 * or `İ`), and so are those of the lists and maps a condition builds and compares:
 * test/lambdas/federation/condition-calibration.test.ts times each against its charge, and
 * docs/workload-identity.md ("Conditions") lists them and says why.
 */
import { CONDITION_STEP_WORK } from './limits';

/** What a charge depends on: a value's kind, its characters, and (for a list) its elements. */
export interface ValueSize {
  kind: 'string' | 'list' | 'map' | 'other';
  /** Characters of a string, or of all the strings of a list. */
  characters: number;
  /** Elements of a list or entries of a map; 1 otherwise. */
  count: number;
}

/** A charge from the receiver (the first argument of a global function) and the other arguments. */
type Charge = (self: ValueSize, args: readonly ValueSize[]) => number;

/**
 * A substring search of a needle of m characters in a text of n: linear for most needles, n·m/4
 * for the worst (about 0.2 ns per character pair for `indexOf`, 0.3 for `lastIndexOf`).
 */
export const searchCost = (n: number, m: number): number => 2 * (n + m) + Math.ceil((n * m) / 4);
/** `lastIndexOf`: half as much again per character pair, as measured (three of the largest were the slowest condition saved). */
export const reverseSearchCost = (n: number, m: number): number => 2 * (n + m) + Math.ceil((3 * n * m) / 8);

/** Units per piece `split` makes and per element `join` reads (an allocation each, about 25 ns). */
export const PIECE_WORK = 20;
/** Units per character of a case change: `ﬃ` to `FFI` takes about 24 ns. */
export const CASE_CHANGE_WORK = 10;
/** Units per character when counting a string's code points one by one (`size`). */
export const CODE_POINT_WORK = 4;

/**
 * Units a list or map weighs beyond its elements, wherever it is yielded: a literal allocates
 * it, and the meter walks it to weigh it (`[[a]]` is two, and each node that yields it walks
 * both again: the meter remembers the weight of long lists only).
 */
export const CONTAINER_WEIGHT = 50;
/** Units each entry of a map weighs beyond its key and value: a `Map` entry set and read back. */
export const MAP_ENTRY_WEIGHT = 150;
/**
 * Units per pair of lists or maps an `==`, `!=` or `in` compares inside its operands (and, for
 * `in`, the item with each element): for each pair, the engine looks the equality up by the
 * runtime types of both values.
 */
export const COMPARE_WORK = 400;

const needle = (args: readonly ValueSize[]) => args[0]?.characters ?? 0;

/** The pieces `split` can make: one per character for an empty separator. */
export function splitPieces(n: number, separator: number): number {
  return separator === 0 ? n : Math.floor(n / separator) + 1;
}

/** Each callable function's charge, by name, from the sizes of its receiver and arguments. */
export const CALL_CHARGES: Readonly<Record<string, Charge>> = Object.freeze({
  size: (self) => (self.kind === 'string' ? CODE_POINT_WORK * self.characters : 1),
  contains: (self, args) => searchCost(self.characters, needle(args)),
  indexOf: (self, args) => searchCost(self.characters, needle(args)),
  lastIndexOf: (self, args) => reverseSearchCost(self.characters, needle(args)),
  startsWith: (_self, args) => needle(args) + 1,
  endsWith: (_self, args) => needle(args) + 1,
  lowerAscii: (self) => CASE_CHANGE_WORK * self.characters,
  upperAscii: (self) => CASE_CHANGE_WORK * self.characters,
  trim: (self) => self.characters,
  substring: (self) => self.characters,
  split: (self, args) => searchCost(self.characters, needle(args)) + PIECE_WORK * splitPieces(self.characters, needle(args)),
  join: (self, args) => PIECE_WORK * self.count + self.characters + needle(args) * self.count,
  // A conversion from a string trims it first; `double` also changes its case.
  int: (self) => self.characters + CONDITION_STEP_WORK,
  uint: (self) => self.characters + CONDITION_STEP_WORK,
  double: (self) => (CASE_CHANGE_WORK + 2) * self.characters + CONDITION_STEP_WORK,
  bool: () => CONDITION_STEP_WORK,
  string: (self) => self.characters + CONDITION_STEP_WORK,
});

/** The functions a condition may call (the comprehension macros aside). */
export const CALLABLE_FUNCTIONS: readonly string[] = Object.freeze(Object.keys(CALL_CHARGES));

/**
 * Functions that can fail on some input, so cost an error ({@link CONDITION_ERROR_WORK} in
 * limits.ts) when they do: a conversion of a string that is not a number or a bool, `substring`
 * or `indexOf(s, from)` out of range.
 */
export function callMayFail(name: string, argumentCount: number): boolean {
  if (name === 'int' || name === 'uint' || name === 'double' || name === 'bool' || name === 'substring') return true;
  return (name === 'indexOf' || name === 'lastIndexOf') && argumentCount === 2;
}
