import { Refusal } from './token-refusal';

/**
 * The service's time rules for every JWT it accepts, subject tokens (docs/reference.md#subject-tokens rule 2) and its
 * own access tokens (docs/reference.md#scopes-and-access rule 5) alike: `exp` is required and has no leeway (a token with
 * less than one second left is expired), `nbf` and `iat` have {@link CLOCK_LEEWAY_SECONDS},
 * and each is a NumericDate (RFC 7519 §2: a JSON number, fractions included).
 *
 * Why here and not in jose: `jwtVerify` applies one `clockTolerance` to `exp` and `nbf` alike
 * (and checks a future `iat` only with `maxTokenAge`), and accepts any JSON number. The
 * exchange verifies subject tokens with `compactVerify` and applies these rules itself; the
 * access-token verifier lets `jwtVerify` check with the `nbf`/`iat` tolerance, which can never
 * refuse what these rules accept, and then applies these rules, which decide.
 */

/**
 * Allowed clock difference between a token's issuer and the service for `nbf` and `iat`.
 * None for `exp`: an issued token never outlives the exchanged one (docs/reference.md#scopes-and-access rule 4), so a
 * token past its `exp` could only yield a token that is already expired.
 */
export const CLOCK_LEEWAY_SECONDS = 30;

/** 2^53: from here on a double no longer holds every whole second. */
const NUMERIC_DATE_BOUND = 2 ** 53;

/**
 * RFC 7519 §2 NumericDate: a JSON number of seconds, which "can be non-integer" (identity
 * providers write `Date.now() / 1000 + 3600`). Any finite value below 2^53 in magnitude;
 * strings, `NaN`, infinities and values from 2^53 on are not.
 */
export function isNumericDate(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && Math.abs(value) < NUMERIC_DATE_BOUND;
}

/**
 * The whole second an `exp` is counted as: its fraction dropped, so what the service derives
 * from it (an access token's `exp`, `expires_in`, how long a `jti` is remembered) is an integer
 * never later than the token says. An `exp` 120.37 s ahead gives 120 s of lifetime.
 */
export function wholeSeconds(numericDate: number): number {
  return Math.floor(numericDate);
}

/**
 * RFC 7519 §4.1.4-4.1.6 under the rules above. Returns the admin-facing sentence on success,
 * a {@link Refusal} (`expired`, `not_yet_valid`, or `malformed_token` for a claim that is not
 * a NumericDate) otherwise.
 */
export function checkValidityWindow(claims: Record<string, unknown>, now: Date): string | Refusal {
  const nowSeconds = now.getTime() / 1000;
  const leeway = `${CLOCK_LEEWAY_SECONDS} s leeway`;
  const { exp, nbf, iat } = claims;
  if (exp === undefined) return new Refusal('expired', 'The token has no exp claim; an expiry is required.');
  if (!isNumericDate(exp)) return notNumericDate('exp', exp);
  if (nowSeconds >= exp) {
    return new Refusal('expired', `The token expired at ${at(exp)}; it is now ${now.toISOString()} (no leeway on exp: an issued token never outlives the exchanged one).`);
  }
  // Lifetimes are whole seconds: a token with less than one left could only yield one of none.
  if (exp - nowSeconds < 1) {
    return new Refusal('expired', `The token expires at ${at(exp)}, less than a second after ${now.toISOString()}; lifetimes are whole seconds.`);
  }
  if (nbf !== undefined) {
    if (!isNumericDate(nbf)) return notNumericDate('nbf', nbf);
    if (nowSeconds < nbf - CLOCK_LEEWAY_SECONDS) {
      return new Refusal('not_yet_valid', `The token is not valid before ${at(nbf)}; it is now ${now.toISOString()} (${leeway}).`);
    }
  }
  if (iat !== undefined) {
    if (!isNumericDate(iat)) return notNumericDate('iat', iat);
    if (iat > nowSeconds + CLOCK_LEEWAY_SECONDS) {
      return new Refusal('not_yet_valid', `The token was issued in the future, at ${at(iat)}; it is now ${now.toISOString()} (${leeway}).`);
    }
  }
  return `It is valid until ${at(exp)} (nbf and iat with ${leeway}).`;
}

function notNumericDate(claim: 'exp' | 'nbf' | 'iat', value: unknown): Refusal {
  if (typeof value !== 'number') return new Refusal('malformed_token', `The token ${claim} claim is not a number of seconds (NumericDate).`);
  return new Refusal('malformed_token', `The token ${claim} claim ${String(value).slice(0, 40)} is not a finite number of seconds below 2^53 (NumericDate).`);
}

/** ISO time of a NumericDate, or the number itself when no Date can hold it. */
function at(seconds: number): string {
  return Math.abs(seconds) < 8.64e12 ? new Date(seconds * 1000).toISOString() : String(seconds);
}
