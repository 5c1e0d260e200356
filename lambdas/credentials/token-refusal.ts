/**
 * Why a token is refused, whatever it is presented as: a subject token at the exchange
 * (lambdas/federation/) or one of the service's access tokens on a protected route. The checks
 * every JWT goes through (jose-refusal.ts, token-time-rules.ts) refuse with these reasons; the
 * exchange records them among its own (lambdas/federation/exchange-types.ts).
 */
export const TOKEN_REFUSAL_REASONS = [
  'malformed_token',
  'token_type_refused',
  'unsupported_alg',
  'unknown_kid',
  'bad_signature',
  'keys_unavailable',
  'expired',
  'not_yet_valid',
  'iss_mismatch',
  'aud_mismatch',
  'sub_mismatch',
] as const;
/** One of {@link TOKEN_REFUSAL_REASONS}. */
export type TokenRefusalReason = (typeof TOKEN_REFUSAL_REASONS)[number];

/**
 * A refusal: its stable reason, and the detail an admin sees. The exchange refuses with the same
 * class, for its own reasons too, so one `instanceof` tells a refusal from a result everywhere.
 */
export class Refusal<Reason extends string = TokenRefusalReason> {
  constructor(
    readonly reason: Reason,
    readonly detail: string,
  ) {}
}
