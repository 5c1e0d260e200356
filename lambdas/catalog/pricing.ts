/**
 * The pricing rules (docs/reference.md#pricing-and-cost): which `PricingOverride` entries apply to one request, what the
 * price of each token kind then is, and whether a `PublicPricing` object is well formed.
 *
 * Prices are decimal strings and stay strings: arithmetic (the discount) is done in exact
 * decimal on scaled BigInts, never in floating point, so "0.0000003" × 0.9 is "0.00000027".
 */
import {
  OVERRIDABLE_PRICE_KEYS,
  PRICE_KEYS,
  WEEKDAYS,
  type OverridablePriceKey,
  type PriceKey,
  type PricingOverride,
  type PublicPricing,
} from './types';
import { DECIMAL, formatDecimal, multiplyScaled, numberToScaled, parseDecimal, addScaled, subtractFromOne, type Scaled } from '../decimal';

/** The price of each token kind for one request, after overrides and discount. */
export type EffectivePrice = { prompt: string; completion: string } & Partial<
  Record<Exclude<PriceKey, 'prompt' | 'completion'>, string>
>;

/** What of a request its price depends on: its prompt size and its instant. */
export interface PricingRequest {
  /** Total prompt tokens of the request (docs/reference.md#pricing-and-cost `min_prompt_tokens`). */
  promptTokens: number;
  /** The request instant; windows and weekdays are read in UTC from it. */
  at: Date;
}

/**
 * Router models publish "-1" for prompt and completion: the price is not fixed but that of
 * whichever model the router picks. It is the only negative value a price may hold.
 */
export const VARIABLE_PRICE = '-1';

const OVERRIDABLE = new Set<string>(OVERRIDABLE_PRICE_KEYS);
const KNOWN_WEEKDAYS = new Set<string>(WEEKDAYS);
const MINUTES_PER_DAY = 24 * 60;

/**
 * Effective price per token kind for one request (docs/reference.md#pricing-and-cost, rules 1
 * and 4). An override whose condition fields are malformed never applies; a price the discount
 * does not change (no discount, a zero price, the router's "-1") comes back exactly as given;
 * keys come in `PRICE_KEYS` order. A discount outside [0, 1], or a malformed price to discount,
 * throws a `RangeError`: input is expected to have passed {@link validatePricing}.
 *
 * @example
 * effectivePricing({ prompt: '0.000003', completion: '0.000015', overrides: [{ min_prompt_tokens: 200000, prompt: '0.000006' }] },
 *   { promptTokens: 250000, at: new Date() }); // { prompt: '0.000006', completion: '0.000015' }
 */
export function effectivePricing(pricing: PublicPricing, request: PricingRequest): EffectivePrice {
  const chosen = new Map<PriceKey, string>();
  for (const key of PRICE_KEYS) {
    const value = pricing[key];
    if (typeof value === 'string') chosen.set(key, value);
  }
  for (const override of pricing.overrides ?? []) {
    if (!overrideApplies(override, request)) continue;
    // docs/reference.md#pricing-and-cost: later applicable entries win per key; absent keys inherit.
    for (const key of OVERRIDABLE_PRICE_KEYS) {
      const value = override[key];
      if (typeof value === 'string') chosen.set(key, value);
    }
  }

  const discount = pricing.discount ?? 0;
  if (!(discount >= 0 && discount <= 1)) {
    throw new RangeError(`pricing.discount ${discount} is outside [0, 1]`);
  }
  const factor = discount === 0 ? null : subtractFromOne(numberToScaled(discount));

  const result: Partial<Record<PriceKey, string>> = {};
  for (const key of PRICE_KEYS) {
    const value = chosen.get(key);
    if (value === undefined) continue;
    result[key] = factor === null || value === VARIABLE_PRICE ? value : applyFactor(key, value, factor);
  }
  return result as EffectivePrice;
}

/**
 * Problems with a pricing object, as human-readable messages naming the field
 * (`pricing.overrides[1].utc_end: ...`); empty when the object is well formed. The catalog
 * import rejects a model whose pricing has any.
 */
export function validatePricing(pricing: PublicPricing): string[] {
  const problems: string[] = [];
  for (const key of ['prompt', 'completion'] as const) {
    if (pricing[key] === undefined) problems.push(`pricing.${key}: is required`);
  }
  for (const key of PRICE_KEYS) {
    checkPrice(`pricing.${key}`, pricing[key], problems);
  }
  if (pricing.discount !== undefined) {
    const discount: unknown = pricing.discount;
    if (typeof discount !== 'number' || !(discount >= 0 && discount <= 1)) {
      problems.push(`pricing.discount: ${JSON.stringify(discount)} must be a number between 0 and 1`);
    }
  }
  if (pricing.overrides !== undefined) {
    if (!Array.isArray(pricing.overrides)) {
      problems.push('pricing.overrides: must be an array');
    } else {
      pricing.overrides.forEach((override, i) => checkOverride(`pricing.overrides[${i}]`, override, problems));
    }
  }
  return problems;
}

/**
 * Mean of the base prompt and completion prices per token, discount applied, as a number for
 * pricing sorts. `null` when the price is unknown: the router's "-1" (or any negative or
 * malformed price).
 */
export function averageTokenPrice(pricing: PublicPricing): number | null {
  const prompt = parseDecimal(pricing.prompt);
  const completion = parseDecimal(pricing.completion);
  if (prompt === null || completion === null || prompt.units < 0n || completion.units < 0n) return null;
  const discount = pricing.discount ?? 0;
  if (!(discount >= 0 && discount <= 1)) return null;
  let sum = addScaled(prompt, completion);
  if (discount !== 0) sum = multiplyScaled(sum, subtractFromOne(numberToScaled(discount)));
  return Number(formatDecimal(sum)) / 2;
}


// --- override conditions (docs/reference.md#pricing-and-cost PricingOverride) ---

function overrideApplies(override: PricingOverride, request: PricingRequest): boolean {
  const { min_prompt_tokens: minPromptTokens, utc_start: start, utc_end: end, utc_days: days } = override;
  if (minPromptTokens !== undefined) {
    if (!isValidMinPromptTokens(minPromptTokens)) return false;
    // docs/reference.md#pricing-and-cost: strictly greater than.
    if (!(request.promptTokens > minPromptTokens)) return false;
  }
  if (days !== undefined) {
    if (!Array.isArray(days) || days.length === 0 || !days.every((d) => KNOWN_WEEKDAYS.has(d))) return false;
    // docs/reference.md#pricing-and-cost "evaluated at the request instant": the weekday of the instant itself, also
    // after midnight inside a window that wraps (02:00 Monday is Monday, not Sunday's night).
    if (!days.includes(WEEKDAYS[request.at.getUTCDay()])) return false;
  }
  if (start !== undefined || end !== undefined) {
    const from = start === undefined ? 0 : hhmmToMinutes(start);
    const to = end === undefined ? MINUTES_PER_DAY : hhmmToMinutes(end);
    if (from === null || to === null) return false;
    if (!inDailyWindow(minuteOfUtcDay(request.at), from, to)) return false;
  }
  return true;
}

/**
 * Half-open [from, to) in minutes of the UTC day; wraps past midnight when from > to.
 * from === to is an empty window (it never matches): a whole-day window is written 0–2400.
 */
function inDailyWindow(minute: number, from: number, to: number): boolean {
  if (from < to) return minute >= from && minute < to;
  if (from > to) return minute >= from || minute < to;
  return false;
}

/** Boundaries are whole minutes, so flooring the instant to its minute compares exactly. */
function minuteOfUtcDay(at: Date): number {
  return at.getUTCHours() * 60 + at.getUTCMinutes();
}

/** HHMM clock number to minutes of the day; null unless an integer 0..2400 with minutes < 60. */
function hhmmToMinutes(value: unknown): number | null {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 2400) return null;
  const minutes = value % 100;
  if (minutes >= 60) return null;
  return Math.floor(value / 100) * 60 + minutes;
}

function isValidMinPromptTokens(value: unknown): boolean {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}

// --- validation ---

function checkPrice(path: string, value: unknown, problems: string[]): void {
  if (value === undefined) return;
  if (typeof value !== 'string') {
    problems.push(`${path}: ${JSON.stringify(value)} must be a decimal string`);
  } else if (!DECIMAL.test(value)) {
    problems.push(`${path}: ${JSON.stringify(value)} is not a decimal number`);
  } else if (value.startsWith('-') && value !== VARIABLE_PRICE) {
    problems.push(`${path}: ${JSON.stringify(value)} is negative (only "${VARIABLE_PRICE}", a variable price, may be)`);
  }
}

function checkOverride(path: string, override: PricingOverride, problems: string[]): void {
  if (typeof override !== 'object' || override === null || Array.isArray(override)) {
    problems.push(`${path}: must be an object`);
    return;
  }
  for (const key of PRICE_KEYS) {
    if (key in override && !OVERRIDABLE.has(key)) {
      problems.push(`${path}.${key}: is not a price an override may replace`);
    }
  }
  for (const key of OVERRIDABLE_PRICE_KEYS) checkPrice(`${path}.${key}`, override[key], problems);

  if (override.min_prompt_tokens !== undefined && !isValidMinPromptTokens(override.min_prompt_tokens)) {
    problems.push(`${path}.min_prompt_tokens: ${JSON.stringify(override.min_prompt_tokens)} must be a number ≥ 0`);
  }
  for (const key of ['utc_start', 'utc_end'] as const) {
    const value = override[key];
    if (value !== undefined && hhmmToMinutes(value) === null) {
      problems.push(`${path}.${key}: ${JSON.stringify(value)} is not an HHMM clock time (0 to 2400, minutes below 60)`);
    }
  }
  if (
    override.utc_start !== undefined &&
    override.utc_start === override.utc_end &&
    hhmmToMinutes(override.utc_start) !== null
  ) {
    problems.push(`${path}: utc_start equals utc_end, an empty window that never applies`);
  }
  const days: unknown = override.utc_days;
  if (days !== undefined) {
    if (!Array.isArray(days)) {
      problems.push(`${path}.utc_days: must be an array of weekdays`);
    } else if (days.length === 0) {
      problems.push(`${path}.utc_days: must name at least one weekday`);
    } else {
      for (const day of days) {
        if (typeof day !== 'string' || !KNOWN_WEEKDAYS.has(day)) {
          problems.push(`${path}.utc_days: ${JSON.stringify(day)} is not a weekday (${WEEKDAYS.join(', ')})`);
        }
      }
    }
  }
}

function applyFactor(key: PriceKey | OverridablePriceKey, value: string, factor: Scaled): string {
  const price = parseDecimal(value);
  if (price === null) throw new RangeError(`price ${key} ${JSON.stringify(value)} is not a decimal number`);
  if (price.units === 0n) return value;
  return formatDecimal(multiplyScaled(price, factor));
}
