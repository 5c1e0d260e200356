import { randomBytes } from 'node:crypto';

/**
 * ECDSA over P-256 on a message digest (FIPS 186-4 §6.4), as KMS `Sign` with
 * `MessageType: DIGEST` does. Node's crypto hashes before signing and has no way to sign
 * a given digest, so the stand-in does the curve arithmetic itself. Test code only: it
 * makes no attempt at constant time.
 */
const P = 0xffffffff00000001000000000000000000000000ffffffffffffffffffffffffn;
const N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
const G = {
  x: 0x6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296n,
  y: 0x4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5n,
};

type Jacobian = { x: bigint; y: bigint; z: bigint } | null;

const mod = (a: bigint, m: bigint) => ((a % m) + m) % m;

function invert(a: bigint, m: bigint): bigint {
  let [oldR, r] = [mod(a, m), m];
  let [oldS, s] = [1n, 0n];
  while (r !== 0n) {
    const q = oldR / r;
    [oldR, r] = [r, oldR - q * r];
    [oldS, s] = [s, oldS - q * s];
  }
  return mod(oldS, m);
}

function double(point: Jacobian): Jacobian {
  if (!point || point.y === 0n) return null;
  const { x, y, z } = point;
  const y2 = mod(y * y, P);
  const s = mod(4n * x * y2, P);
  const z2 = mod(z * z, P);
  const m = mod(3n * (x - z2) * (x + z2), P); // a = -3
  const x3 = mod(m * m - 2n * s, P);
  return { x: x3, y: mod(m * (s - x3) - 8n * y2 * y2, P), z: mod(2n * y * z, P) };
}

function add(a: Jacobian, b: Jacobian): Jacobian {
  if (!a) return b;
  if (!b) return a;
  const z1z1 = mod(a.z * a.z, P);
  const z2z2 = mod(b.z * b.z, P);
  const u1 = mod(a.x * z2z2, P);
  const u2 = mod(b.x * z1z1, P);
  const s1 = mod(a.y * b.z * z2z2, P);
  const s2 = mod(b.y * a.z * z1z1, P);
  if (u1 === u2) return s1 === s2 ? double(a) : null;
  const h = mod(u2 - u1, P);
  const r = mod(s2 - s1, P);
  const h2 = mod(h * h, P);
  const h3 = mod(h2 * h, P);
  const x3 = mod(r * r - h3 - 2n * u1 * h2, P);
  return { x: x3, y: mod(r * (u1 * h2 - x3) - s1 * h3, P), z: mod(h * a.z * b.z, P) };
}

function multiplyG(k: bigint): bigint {
  let result: Jacobian = null;
  let addend: Jacobian = { ...G, z: 1n };
  for (let bits = k; bits > 0n; bits >>= 1n) {
    if (bits & 1n) result = add(result, addend);
    addend = double(addend);
  }
  if (!result) throw new Error('point at infinity');
  const zInv = invert(result.z, P);
  return mod(result.x * zInv * zInv, P);
}

const toBigInt = (bytes: Uint8Array) => BigInt(`0x${Buffer.from(bytes).toString('hex') || '0'}`);

function derInteger(value: bigint): Buffer {
  let hex = value.toString(16);
  if (hex.length % 2) hex = `0${hex}`;
  let bytes = Buffer.from(hex, 'hex');
  if (bytes[0]! & 0x80) bytes = Buffer.concat([Buffer.from([0]), bytes]);
  return Buffer.concat([Buffer.from([0x02, bytes.length]), bytes]);
}

/** Signs a 32-byte digest with the private scalar `d`, returning DER `SEQUENCE{r, s}`. */
export function signDigest(digest: Uint8Array, d: Uint8Array): Buffer {
  const z = toBigInt(digest);
  const secret = toBigInt(d);
  for (;;) {
    const k = mod(toBigInt(randomBytes(40)), N - 1n) + 1n;
    const r = mod(multiplyG(k), N);
    if (r === 0n) continue;
    const s = mod(invert(k, N) * (z + r * secret), N);
    if (s === 0n) continue;
    const body = Buffer.concat([derInteger(r), derInteger(s)]);
    return Buffer.concat([Buffer.from([0x30, body.length]), body]);
  }
}
