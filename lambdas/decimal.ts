/**
 * Exact decimal arithmetic on decimal strings, on scaled BigInts and never in floating point: the
 * prices of the catalog, the costs of usage and the amounts of spending limits.
 */

/**
 * Exact product of two decimal strings, normalised (no exponent, no trailing zeros, "0" for
 * zero). Throws a `RangeError` when either is not a decimal string.
 *
 * @example multiplyDecimal('0.0000003', '0.9') // '0.00000027'
 */
export function multiplyDecimal(a: string, b: string): string {
  const left = parseDecimal(a);
  const right = parseDecimal(b);
  if (left === null) throw new RangeError(`${JSON.stringify(a)} is not a decimal number`);
  if (right === null) throw new RangeError(`${JSON.stringify(b)} is not a decimal number`);
  return formatDecimal(multiplyScaled(left, right));
}

/**
 * Exact sum of decimal strings, normalised like {@link multiplyDecimal}. Throws a
 * `RangeError` when one is not a decimal string.
 *
 * @example addDecimals(['0.1', '0.2']) // '0.3'
 */
export function addDecimals(values: readonly string[]): string {
  let sum: Scaled = { units: 0n, scale: 0 };
  for (const value of values) {
    const parsed = parseDecimal(value);
    if (parsed === null) throw new RangeError(`${JSON.stringify(value)} is not a decimal number`);
    sum = addScaled(sum, parsed);
  }
  return formatDecimal(sum);
}


/** A plain decimal string: digits, an optional fraction, no exponent. */
export const DECIMAL = /^-?\d+(\.\d+)?$/;

/** value = units / 10^scale */
export interface Scaled {
  units: bigint;
  scale: number;
}

/** The scaled value of a decimal string, or null when it is not one. */
export function parseDecimal(value: string): Scaled | null {
  if (!DECIMAL.test(value)) return null;
  const negative = value.startsWith('-');
  const [whole, fraction = ''] = (negative ? value.slice(1) : value).split('.');
  const units = BigInt(whole + fraction);
  return { units: negative ? -units : units, scale: fraction.length };
}

/** The exact decimal a double prints as (its shortest round-trip form), exponent resolved. */
export function numberToScaled(value: number): Scaled {
  const match = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(value));
  if (match === null) throw new RangeError(`${value} is not a finite number`);
  const [, sign, whole, fraction = '', exponent = '0'] = match;
  let units = BigInt(whole + fraction);
  let scale = fraction.length - Number(exponent);
  if (scale < 0) {
    units *= 10n ** BigInt(-scale);
    scale = 0;
  }
  return { units: sign === '-' ? -units : units, scale };
}

/** The normalised decimal string of a scaled value: no trailing zeros, "0" for zero. */
export function formatDecimal({ units, scale }: Scaled): string {
  if (units === 0n) return '0';
  const negative = units < 0n;
  let digits = (negative ? -units : units).toString();
  while (scale > 0 && digits.endsWith('0')) {
    digits = digits.slice(0, -1);
    scale -= 1;
  }
  if (digits.length <= scale) digits = '0'.repeat(scale - digits.length + 1) + digits;
  const text = scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  return negative ? `-${text}` : text;
}

/** The exact product. */
export function multiplyScaled(a: Scaled, b: Scaled): Scaled {
  return { units: a.units * b.units, scale: a.scale + b.scale };
}

/** The exact sum, at the larger scale. */
export function addScaled(a: Scaled, b: Scaled): Scaled {
  const scale = Math.max(a.scale, b.scale);
  return {
    units: a.units * 10n ** BigInt(scale - a.scale) + b.units * 10n ** BigInt(scale - b.scale),
    scale,
  };
}

/** 1 - value (a discount's factor). */
export function subtractFromOne(value: Scaled): Scaled {
  return { units: 10n ** BigInt(value.scale) - value.units, scale: value.scale };
}

/** A number's text with its exponent resolved, as a plain decimal: `3e-7` is `0.0000003`; other text as it is. */
export function expandExponent(text: string): string {
  const match = /^(-?)(\d+)(?:\.(\d+))?e([+-]\d+)$/i.exec(text);
  if (!match) return text;
  const [, sign, whole, fraction = '', exponent] = match;
  const digits = `${whole}${fraction}`;
  const point = whole!.length + Number(exponent);
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return `${sign}${digits}${'0'.repeat(point - digits.length)}`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}
