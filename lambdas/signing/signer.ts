import type { JWK } from 'jose';

/**
 * Signs JWS payloads with ES256. Implementations return the JOSE signature form (r||s,
 * 64 bytes), converting from DER at one place: {@link derToJose}.
 */
export interface Signer {
  /** Key id published in the JWKS and written in the JWT header. */
  readonly kid: string;
  sign(signingInput: Uint8Array): Promise<Uint8Array>;
}

/** A verification key as published, and whether it still signs. */
export interface SigningKeyRecord {
  kid: string;
  /** KMS key ARN in AWS, or the local key file name. */
  keyRef: string;
  publicJwk: JWK;
  status: 'active' | 'retired';
  createdAt: string;
  /** When the key stopped signing; it is published until every token it signed has expired. */
  retiredAt: string | null;
}

/** Where signing-key records are kept (the keys table, `SIGNING_KEY` partition). */
export interface SigningKeyStore {
  put(record: SigningKeyRecord): Promise<void>;
  list(): Promise<SigningKeyRecord[]>;
}

/**
 * DER `SEQUENCE { INTEGER r, INTEGER s }` to the 64-byte r||s that JWS ES256 needs.
 * DER integers carry a leading zero when the high bit is set, and lose leading zero
 * bytes when the value is short: strip and left-pad each to 32 bytes.
 */
export function derToJose(der: Uint8Array): Uint8Array {
  let offset = 0;
  const expect = (byte: number, what: string) => {
    if (der[offset] !== byte) throw new Error(`Invalid DER ECDSA signature: expected ${what}`);
    offset++;
  };
  expect(0x30, 'SEQUENCE');
  let length = der[offset++]!;
  if (length & 0x80) {
    const bytes = length & 0x7f;
    length = 0;
    for (let i = 0; i < bytes; i++) length = (length << 8) | der[offset++]!;
  }
  if (offset + length !== der.length) throw new Error('Invalid DER ECDSA signature: length mismatch');
  const out = new Uint8Array(64);
  for (const position of [0, 32]) {
    expect(0x02, 'INTEGER');
    const intLength = der[offset++]!;
    let value = der.subarray(offset, offset + intLength);
    offset += intLength;
    while (value.length > 32 && value[0] === 0) value = value.subarray(1);
    if (value.length > 32) throw new Error('Invalid DER ECDSA signature: integer longer than 32 bytes');
    out.set(value, position + 32 - value.length);
  }
  return out;
}
