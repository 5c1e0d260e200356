import { Refusal } from '../../../lambdas/credentials/token-refusal';
import { CLOCK_LEEWAY_SECONDS, checkValidityWindow, isNumericDate, wholeSeconds } from '../../../lambdas/credentials/token-time-rules';

const NOW = new Date('2026-11-21T12:00:00Z');
const NOW_S = NOW.getTime() / 1000;

const outcome = (claims: Record<string, unknown>, now = NOW) => {
  const result = checkValidityWindow(claims, now);
  return result instanceof Refusal ? { reason: result.reason, detail: result.detail } : { reason: null, detail: result };
};

describe('isNumericDate: RFC 7519 §2, any finite JSON number below 2^53, fractions included', () => {
  it.each([0, NOW_S, NOW_S + 0.5, NOW_S + 120.37, -1, -1.5, 1e-9, Number.MAX_SAFE_INTEGER, 2 ** 52 + 0.5])('accepts %p', (value) => {
    expect(isNumericDate(value)).toBe(true);
  });

  it.each([2 ** 53, 2 ** 53 + 2, -(2 ** 53), 1e300, Infinity, -Infinity, NaN, String(NOW_S), `${NOW_S}.5`, null, undefined, true, [NOW_S], { value: NOW_S }])(
    'refuses %p',
    (value) => {
      expect(isNumericDate(value)).toBe(false);
    },
  );

  it('counts an exp in whole seconds, never later than the token says', () => {
    expect(wholeSeconds(NOW_S + 120.37)).toBe(NOW_S + 120);
    expect(wholeSeconds(NOW_S + 120.999999)).toBe(NOW_S + 120);
    expect(wholeSeconds(NOW_S + 120)).toBe(NOW_S + 120);
  });
});

describe('checkValidityWindow: the time rules shared by subject tokens and access tokens', () => {
  it('accepts a token inside its window and says until when', () => {
    expect(outcome({ exp: NOW_S + 300, iat: NOW_S - 10, nbf: NOW_S - 10 })).toEqual({
      reason: null,
      detail: 'It is valid until 2026-11-21T12:05:00.000Z (nbf and iat with 30 s leeway).',
    });
  });

  it('gives exp no leeway and counts whole seconds: refused with less than one second left, accepted with one', () => {
    expect(outcome({ exp: NOW_S }).reason).toBe('expired');
    expect(outcome({ exp: NOW_S }, new Date(NOW.getTime() - 1)).reason).toBe('expired');
    expect(outcome({ exp: NOW_S + 1 }, new Date(NOW.getTime() + 1))).toEqual({
      reason: 'expired',
      detail: 'The token expires at 2026-11-21T12:00:01.000Z, less than a second after 2026-11-21T12:00:00.001Z; lifetimes are whole seconds.',
    });
    expect(outcome({ exp: NOW_S + 1 }).reason).toBeNull();
    expect(outcome({ exp: NOW_S }, new Date(NOW.getTime() - 1000)).reason).toBeNull();
  });

  it(`gives nbf and iat ${CLOCK_LEEWAY_SECONDS} s of leeway, and not one more`, () => {
    expect(outcome({ exp: NOW_S + 300, nbf: NOW_S + 30, iat: NOW_S + 30 }).reason).toBeNull();
    expect(outcome({ exp: NOW_S + 300, nbf: NOW_S + 31 })).toEqual({
      reason: 'not_yet_valid',
      detail: 'The token is not valid before 2026-11-21T12:00:31.000Z; it is now 2026-11-21T12:00:00.000Z (30 s leeway).',
    });
    expect(outcome({ exp: NOW_S + 300, iat: NOW_S + 31 }).reason).toBe('not_yet_valid');
  });

  it('refuses a token without exp as expired (docs/reference.md#subject-tokens rule 2)', () => {
    expect(outcome({ iat: NOW_S })).toEqual({ reason: 'expired', detail: 'The token has no exp claim; an expiry is required.' });
  });

  it('accepts fractional exp, nbf and iat (RFC 7519 §2), comparing them exactly', () => {
    expect(outcome({ exp: NOW_S + 120.37, nbf: NOW_S - 0.25, iat: NOW_S - 0.25 })).toEqual({
      reason: null,
      detail: 'It is valid until 2026-11-21T12:02:00.370Z (nbf and iat with 30 s leeway).',
    });
    expect(outcome({ exp: NOW_S + 300, nbf: NOW_S + 30.5 }).reason).toBe('not_yet_valid');
    expect(outcome({ exp: NOW_S + 300, nbf: NOW_S + 29.5 }).reason).toBeNull();
    expect(outcome({ exp: NOW_S + 300, iat: NOW_S + 30.001 }).reason).toBe('not_yet_valid');
    // Less than one second left, fraction or not: expired.
    expect(outcome({ exp: NOW_S + 0.999 }).reason).toBe('expired');
    expect(outcome({ exp: NOW_S + 1.001 }).reason).toBeNull();
  });

  it.each([
    ['a string exp', { exp: String(NOW_S + 300) }, 'The token exp claim is not a number of seconds (NumericDate).'],
    ['an exp of 2^53', { exp: 2 ** 53 }, 'The token exp claim 9007199254740992 is not a finite number of seconds below 2^53 (NumericDate).'],
    ['an exp beyond the safe integers', { exp: 1e300 }, 'The token exp claim 1e+300 is not a finite number of seconds below 2^53 (NumericDate).'],
    ['a nbf of -2^53', { exp: NOW_S + 300, nbf: -(2 ** 53) }, 'The token nbf claim -9007199254740992 is not a finite number of seconds below 2^53 (NumericDate).'],
    ['a null iat', { exp: NOW_S + 300, iat: null }, 'The token iat claim is not a number of seconds (NumericDate).'],
  ])('refuses %s as malformed_token', (_name, claims, detail) => {
    expect(outcome(claims)).toEqual({ reason: 'malformed_token', detail });
  });
});
