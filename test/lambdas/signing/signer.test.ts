import { createHash, createPublicKey, generateKeyPairSync, sign as nodeSign } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KMSClient } from '@aws-sdk/client-kms';
import { compactVerify, exportJWK, importJWK } from 'jose';
import { KmsSigner, kmsPublicJwk } from '../../../lambdas/signing/kms-signer';
import { LocalSigner } from '../../../lambdas/signing/local-signer';
import { derToJose } from '../../../lambdas/signing/signer';

function der(r: number[], s: number[]): Uint8Array {
  const body = [0x02, r.length, ...r, 0x02, s.length, ...s];
  return Uint8Array.from([0x30, body.length, ...body]);
}

async function signJws(signer: { kid: string; sign(input: Uint8Array): Promise<Uint8Array> }, payload: object): Promise<string> {
  const header = Buffer.from(JSON.stringify({ alg: 'ES256', kid: signer.kid, typ: 'at+jwt' })).toString('base64url');
  const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
  const signature = await signer.sign(Buffer.from(`${header}.${body}`));
  return `${header}.${body}.${Buffer.from(signature).toString('base64url')}`;
}

describe('derToJose', () => {
  it('strips the leading zero of a 33-byte integer and left-pads a short one', () => {
    const r = [0x00, 0x80, ...Array(31).fill(1)];
    const s = [0x7f, ...Array(29).fill(2)];
    const jose = derToJose(der(r, s));
    expect(jose).toHaveLength(64);
    expect([...jose.subarray(0, 32)]).toEqual(r.slice(1));
    expect([...jose.subarray(32, 34)]).toEqual([0, 0]);
    expect([...jose.subarray(34)]).toEqual(s);
  });

  it.each([
    ['not a sequence', Uint8Array.from([0x31, 0])],
    ['a length that disagrees', Uint8Array.from([0x30, 5, 0x02, 1, 1, 0x02, 1, 1])],
    ['an integer longer than 32 bytes', der(Array(34).fill(1), [1])],
  ])('rejects %s', (_name, input) => {
    expect(() => derToJose(input)).toThrow(/Invalid DER ECDSA signature/);
  });

  it('converts a thousand real node signatures that all verify as JOSE', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = await exportJWK(publicKey);
    const key = await importJWK({ ...jwk, alg: 'ES256' }, 'ES256');
    const header = Buffer.from('{"alg":"ES256"}').toString('base64url');
    for (let i = 0; i < 1000; i++) {
      const payload = Buffer.from(`{"i":${i}}`).toString('base64url');
      const signature = derToJose(nodeSign('sha256', Buffer.from(`${header}.${payload}`), { key: privateKey, dsaEncoding: 'der' }));
      await expect(compactVerify(`${header}.${payload}.${Buffer.from(signature).toString('base64url')}`, key)).resolves.toBeDefined();
    }
  });
});

describe('LocalSigner', () => {
  it('creates its key once, owner-only, and signs ES256 JWS that verify with its public JWK', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'signer-')), 'nested', 'key.pem');
    const signer = await LocalSigner.fromFile(path);
    const again = await LocalSigner.fromFile(path);
    expect(again.kid).toBe(signer.kid);
    expect(readFileSync(path, 'utf8')).toContain('BEGIN PRIVATE KEY');
    expect(statSync(path).mode & 0o077).toBe(0);
    const jws = await signJws(signer, { sub: 'workload' });
    const { payload, protectedHeader } = await compactVerify(jws, await importJWK(signer.publicJwk, 'ES256'));
    expect(JSON.parse(Buffer.from(payload).toString())).toEqual({ sub: 'workload' });
    expect(protectedHeader.kid).toBe(signer.kid);
  });
});

describe('KmsSigner (KMS mocked: it cannot run here)', () => {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const calls: { name: string; input: Record<string, unknown> }[] = [];
  const preimages = new Map<string, Buffer>();
  const register = (input: string) => preimages.set(createHash('sha256').update(input).digest('hex'), Buffer.from(input));
  const kms = {
    send: async (command: { constructor: { name: string }; input: Record<string, unknown> }) => {
      calls.push({ name: command.constructor.name, input: command.input });
      if (command.constructor.name === 'GetPublicKeyCommand') {
        return { PublicKey: createPublicKey(privateKey).export({ format: 'der', type: 'spki' }) };
      }
      // KMS signs the digest it is given and answers in DER. node cannot sign a bare digest,
      // so the fake looks up the message the test registered for that digest.
      const message = preimages.get(Buffer.from(command.input.Message as Uint8Array).toString('hex'));
      if (!message) throw new Error('KMS was sent something other than the SHA-256 of the signing input');
      return { Signature: nodeSign('sha256', message, { key: privateKey, dsaEncoding: 'der' }) };
    },
  } as unknown as KMSClient;

  it('derives the kid from the public key and signs digests that verify as ES256', async () => {
    const { kid, publicJwk } = await kmsPublicJwk(kms, 'arn:aws:kms:eu-west-1:1:key/abc');
    expect(publicJwk).toMatchObject({ kty: 'EC', crv: 'P-256', kid, alg: 'ES256', use: 'sig' });
    expect(publicJwk.x).toBe((await exportJWK(publicKey)).x);
    const signer = new KmsSigner(kms, 'arn:aws:kms:eu-west-1:1:key/abc', kid);
    const header = Buffer.from(JSON.stringify({ alg: 'ES256', kid, typ: 'at+jwt' })).toString('base64url');
    const body = Buffer.from('{"sub":"s"}').toString('base64url');
    register(`${header}.${body}`);
    const jws = await signJws(signer, { sub: 's' });
    await expect(compactVerify(jws, await importJWK(publicJwk, 'ES256'))).resolves.toBeDefined();
    const signCall = calls.find((call) => call.name === 'SignCommand')!;
    expect(signCall.input).toMatchObject({ KeyId: 'arn:aws:kms:eu-west-1:1:key/abc', MessageType: 'DIGEST', SigningAlgorithm: 'ECDSA_SHA_256' });
    expect((signCall.input.Message as Buffer).length).toBe(32);
  });
});
