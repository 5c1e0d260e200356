/**
 * What the service tells clients about DPoP (RFC 9449), in its own module so the discovery
 * documents, the OpenAPI document and the 401 challenge name it without loading the verifier.
 */

/**
 * RFC 9449 §5.1 `dpop_signing_alg_values_supported`: the algorithms a DPoP proof may be signed
 * with. Asymmetric only, never `none` or an HMAC: a proof shows possession of a private key the
 * server never learns.
 */
export const DPOP_SIGNING_ALGS = ['ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512', 'RS256', 'RS384', 'RS512', 'EdDSA', 'Ed25519'] as const;

/** Larger proofs are refused unread: an RSA-8192 key and its signature fit in half of it. */
export const MAX_DPOP_PROOF_BYTES = 8 * 1024;
