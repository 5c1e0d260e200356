import type { StoredLimit } from '../lambdas/accounts/stored-limits';
import type { CommandInput, OpsIo } from './command';

/** Aligned columns with a header; `right` lists the columns (by index) to right-align, e.g. counts. */
export function table(header: readonly string[], rows: readonly (readonly string[])[], right: readonly number[] = []): string[] {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => (right.includes(column) ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)];
}

/** `Label  value` lines, the labels padded to one width. */
export function fields(pairs: readonly (readonly [string, string])[]): string[] {
  const width = Math.max(...pairs.map(([label]) => label.length));
  return pairs.map(([label, value]) => `${label.padEnd(width)}  ${value}`.trimEnd());
}

/** A nullable value for text output. */
export function orDash(value: string | number | null | undefined): string {
  return value === null || value === undefined || value === '' ? '-' : String(value);
}

/** A list for text output: `a, b`, or `-` when empty or absent. */
export function listOrDash(values: readonly string[] | null | undefined): string {
  return values && values.length > 0 ? values.join(', ') : '-';
}

/** A spending cap for text output (docs/limits.md): `25.5 USD weekly`, `100 USD all time`, or `-` for none. */
export function capOrDash(cap: StoredLimit | null | undefined, byokIncluded = false): string {
  if (!cap) return '-';
  return `${cap.amountUsd} USD ${cap.reset ?? 'all time'}${byokIncluded ? ' (BYOK included)' : ''}`;
}

/** `1 model`, `3 models`. */
export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/**
 * Prints the result: the JSON value with `--json`, otherwise the text lines. The text is
 * built only when it is printed.
 */
export function respond(io: OpsIo, input: CommandInput, json: unknown, text: () => readonly string[]): void {
  if (input.json) io.out(JSON.stringify(json, null, 2));
  else for (const line of text()) io.out(line);
}

/** Sort order of every listing: by creation time, ties by id, so output is stable. */
export function oldestFirst(a: { createdAt: string; id: string }, b: { createdAt: string; id: string }): number {
  return a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id);
}
