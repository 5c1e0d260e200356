import { compactVerify, createLocalJWKSet, errors, exportJWK, generateKeyPair, jwtVerify, SignJWT, type CryptoKey, type JWK } from 'jose';
import type { TokenRefusalReason } from '../../../lambdas/credentials/token-refusal';
import { refusalReasonFor } from '../../../lambdas/credentials/jose-refusal';

const claimFailure = (claim: string, reason: string) => new errors.JWTClaimValidationFailed('claim check failed', {}, claim, reason);

describe('refusalReasonFor: one refusal reason per jose error code', () => {
  it.each<[string, errors.JOSEError, TokenRefusalReason]>([
    ['ERR_JWS_SIGNATURE_VERIFICATION_FAILED', new errors.JWSSignatureVerificationFailed(), 'bad_signature'],
    ['ERR_JOSE_ALG_NOT_ALLOWED', new errors.JOSEAlgNotAllowed('alg'), 'unsupported_alg'],
    ['ERR_JWK_INVALID', new errors.JWKInvalid('jwk'), 'unsupported_alg'],
    ['ERR_JWKS_INVALID', new errors.JWKSInvalid('jwks'), 'unsupported_alg'],
    ['ERR_JWKS_NO_MATCHING_KEY', new errors.JWKSNoMatchingKey(), 'unknown_kid'],
    ['ERR_JWKS_MULTIPLE_MATCHING_KEYS', new errors.JWKSMultipleMatchingKeys(), 'unknown_kid'],
    ['ERR_JWKS_TIMEOUT', new errors.JWKSTimeout(), 'keys_unavailable'],
    ['ERR_JWT_EXPIRED', new errors.JWTExpired('expired', {}, 'exp', 'check_failed'), 'expired'],
    ['ERR_JWS_INVALID', new errors.JWSInvalid('jws'), 'malformed_token'],
    ['ERR_JWT_INVALID', new errors.JWTInvalid('jwt'), 'malformed_token'],
    ['ERR_JOSE_NOT_SUPPORTED', new errors.JOSENotSupported('crit'), 'malformed_token'],
    ['ERR_JWE_INVALID', new errors.JWEInvalid('jwe'), 'malformed_token'],
    ['ERR_JOSE_GENERIC', new errors.JOSEError('generic'), 'malformed_token'],
  ])('maps %s', (code, error, reason) => {
    expect(error.code).toBe(code);
    expect(refusalReasonFor(error)).toBe(reason);
  });

  it.each<[string, string, TokenRefusalReason]>([
    ['typ', 'check_failed', 'token_type_refused'],
    ['iss', 'check_failed', 'iss_mismatch'],
    ['iss', 'missing', 'iss_mismatch'],
    ['aud', 'check_failed', 'aud_mismatch'],
    ['sub', 'check_failed', 'sub_mismatch'],
    ['exp', 'missing', 'expired'],
    ['nbf', 'check_failed', 'not_yet_valid'],
    ['iat', 'check_failed', 'not_yet_valid'],
    ['iat', 'missing', 'malformed_token'],
    ['exp', 'invalid', 'malformed_token'],
    ['nbf', 'invalid', 'malformed_token'],
    ['jti', 'missing', 'malformed_token'],
  ])('maps ERR_JWT_CLAIM_VALIDATION_FAILED for claim %s (%s) to %s', (claim, reason, refusal) => {
    expect(refusalReasonFor(claimFailure(claim, reason))).toBe(refusal);
  });

  it('returns null for anything that is not a jose error, for the caller to rethrow', () => {
    expect(refusalReasonFor(new TypeError('Key for the ES256 algorithm must be of type CryptoKey'))).toBeNull();
    expect(refusalReasonFor(new Error('ProvisionedThroughputExceededException'))).toBeNull();
    expect(refusalReasonFor('ERR_JWT_EXPIRED')).toBeNull();
    expect(refusalReasonFor(undefined)).toBeNull();
  });
});

/** Pins that jose raises these codes where the verifiers rely on them, so an upgrade that changes one fails here. */
describe('refusalReasonFor: what jose raises for real tokens', () => {
  const NOW = new Date('2026-11-21T12:00:00Z');
  const NOW_S = NOW.getTime() / 1000;
  let key: { publicKey: CryptoKey; privateKey: CryptoKey };
  let other: { publicKey: CryptoKey; privateKey: CryptoKey };
  let jwk: JWK;

  beforeAll(async () => {
    [key, other] = await Promise.all([generateKeyPair('ES256'), generateKeyPair('ES256')]);
    jwk = { ...(await exportJWK(key.publicKey)), kid: 'k1', alg: 'ES256' };
  });

  const sign = (claims: Record<string, unknown>, header: Record<string, unknown> = {}, privateKey = key.privateKey) =>
    new SignJWT({ iss: 'https://issuer', aud: 'api', iat: NOW_S, exp: NOW_S + 60, ...claims })
      .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: 'k1', ...header })
      .sign(privateKey, { crit: { 'urn:example:ext': true } });
  const unsigned = (header: Record<string, unknown>) => `${Buffer.from(JSON.stringify(header)).toString('base64url')}.${Buffer.from('{}').toString('base64url')}.`;
  const options = { algorithms: ['ES256'], typ: 'at+jwt', issuer: 'https://issuer', audience: 'api', currentDate: NOW, clockTolerance: 30 };

  async function refusal(verification: Promise<unknown>): Promise<[string, TokenRefusalReason | null]> {
    const error = await verification.then(
      () => {
        throw new Error('jose accepted the token');
      },
      (rejection: unknown) => rejection,
    );
    return [(error as errors.JOSEError).code, refusalReasonFor(error)];
  }

  it.each<[string, () => Promise<unknown>, string, TokenRefusalReason]>([
    ['a signature by another key', async () => jwtVerify(await sign({}, {}, other.privateKey), key.publicKey, options), 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED', 'bad_signature'],
    ['alg none', async () => compactVerify(unsigned({ alg: 'none' }), key.publicKey, options), 'ERR_JOSE_ALG_NOT_ALLOWED', 'unsupported_alg'],
    ['HS256', async () => compactVerify(unsigned({ alg: 'HS256' }), key.publicKey, options), 'ERR_JOSE_ALG_NOT_ALLOWED', 'unsupported_alg'],
    ['an unrecognized crit extension', async () => compactVerify(await sign({}, { crit: ['urn:example:ext'], 'urn:example:ext': true }), key.publicKey, options), 'ERR_JOSE_NOT_SUPPORTED', 'malformed_token'],
    ['an empty crit', async () => compactVerify(unsigned({ alg: 'ES256', crit: [] }), key.publicKey, options), 'ERR_JWS_INVALID', 'malformed_token'],
    ['no alg', async () => compactVerify(unsigned({ kid: 'k1' }), key.publicKey, options), 'ERR_JWS_INVALID', 'malformed_token'],
    ['two parts', async () => compactVerify('abc.def', key.publicKey, options), 'ERR_JWS_INVALID', 'malformed_token'],
    ['typ JWT', async () => jwtVerify(await sign({}, { typ: 'JWT' }), key.publicKey, options), 'ERR_JWT_CLAIM_VALIDATION_FAILED', 'token_type_refused'],
    ['another iss', async () => jwtVerify(await sign({ iss: 'https://evil' }), key.publicKey, options), 'ERR_JWT_CLAIM_VALIDATION_FAILED', 'iss_mismatch'],
    ['another aud', async () => jwtVerify(await sign({ aud: 'evil' }), key.publicKey, options), 'ERR_JWT_CLAIM_VALIDATION_FAILED', 'aud_mismatch'],
    ['exp past the tolerance', async () => jwtVerify(await sign({ exp: NOW_S - 31 }), key.publicKey, options), 'ERR_JWT_EXPIRED', 'expired'],
    ['nbf past the tolerance', async () => jwtVerify(await sign({ nbf: NOW_S + 31 }), key.publicKey, options), 'ERR_JWT_CLAIM_VALIDATION_FAILED', 'not_yet_valid'],
    ['a string exp', async () => jwtVerify(await sign({ exp: 'soon' }), key.publicKey, options), 'ERR_JWT_CLAIM_VALIDATION_FAILED', 'malformed_token'],
    ['a kid the set lacks', async () => jwtVerify(await sign({}, { kid: 'k2' }), createLocalJWKSet({ keys: [jwk] }), options), 'ERR_JWKS_NO_MATCHING_KEY', 'unknown_kid'],
    ['no kid before a set of two', async () => jwtVerify(await sign({}, { kid: undefined }), createLocalJWKSet({ keys: [jwk, { ...jwk, kid: 'k2' }] }), options), 'ERR_JWKS_MULTIPLE_MATCHING_KEYS', 'unknown_kid'],
  ])('%s', async (_name, verification, code, reason) => {
    expect(await refusal(verification())).toEqual([code, reason]);
  });
});
