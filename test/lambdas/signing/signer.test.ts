import { createHash, createPublicKey, generateKeyPairSync, sign as nodeSign, verify as nodeVerify } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateKeyCommand, GetPublicKeyCommand, ScheduleKeyDeletionCommand, SignCommand, type KMSClient } from '@aws-sdk/client-kms';
import { calculateJwkThumbprint, compactVerify, exportJWK, importJWK } from 'jose';
import { KmsSigner, kmsPublicJwk } from '../../../lambdas/aws/kms-signer';
import { LocalSigner } from '../../../lambdas/signing/local-signer';
import { derToJose } from '../../../lambdas/signing/signer';
import { startKmsStandIn, type KmsStandIn } from '../../support/kms-stand-in';

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

/**
 * KmsSigner with the real SDK client against the KMS stand-in (test/support/kms-stand-in.ts),
 * which answers as KMS does: DER signatures, DER SPKI public keys, KMS error types. One
 * stand-in and one signing key serve both groups.
 */
describe('the KMS wire protocol, on one stand-in', () => {
  let kms: KmsStandIn;
  let client: KMSClient;
  let keyArn: string;
  beforeAll(async () => {
    kms = await startKmsStandIn();
    client = kms.client();
    keyArn = (await client.send(new CreateKeyCommand({ KeySpec: 'ECC_NIST_P256', KeyUsage: 'SIGN_VERIFY' }))).KeyMetadata!.Arn!;
  });
  afterAll(async () => {
    await kms.stop();
  });

  describe('KmsSigner through the KMS wire protocol', () => {
    it('derives the kid from the DER public key and signs SHA-256 digests that verify as ES256', async () => {
      const { kid, publicJwk } = await kmsPublicJwk(client, keyArn);
      expect(publicJwk).toMatchObject({ kty: 'EC', crv: 'P-256', kid, alg: 'ES256', use: 'sig' });
      expect(kid).toBe(await calculateJwkThumbprint({ kty: 'EC', crv: 'P-256', x: publicJwk.x, y: publicJwk.y }, 'sha256'));
      const signer = new KmsSigner(client, keyArn, kid);
      const before = kms.requests.length;

      const jws = await signJws(signer, { sub: 's' });

      const { protectedHeader } = await compactVerify(jws, await importJWK(publicJwk, 'ES256'));
      expect(protectedHeader).toEqual({ alg: 'ES256', kid, typ: 'at+jwt' });
      const [request] = kms.requests.slice(before);
      const signingInput = jws.split('.').slice(0, 2).join('.');
      expect(request).toEqual({
        operation: 'Sign',
        body: {
          KeyId: keyArn,
          MessageType: 'DIGEST',
          SigningAlgorithm: 'ECDSA_SHA_256',
          Message: createHash('sha256').update(signingInput).digest('base64'),
        },
      });
    });

    it('turns every DER signature KMS returns into a JOSE signature that verifies (short and padded r, s)', async () => {
      const { kid, publicJwk } = await kmsPublicJwk(client, keyArn);
      const key = await importJWK(publicJwk, 'ES256');
      const signer = new KmsSigner(client, keyArn, kid);
      for (let i = 0; i < 60; i++) {
        await expect(compactVerify(await signJws(signer, { i }), key)).resolves.toBeDefined();
      }
    });

    it('fails with the KMS error when the key is unknown or pending deletion', async () => {
      const unknown = 'arn:aws:kms:eu-west-1:111122223333:key/00000000-0000-0000-0000-000000000000';
      await expect(new KmsSigner(client, unknown, 'k').sign(Buffer.from('x'))).rejects.toMatchObject({
        name: 'NotFoundException',
        message: `Key '${unknown}' does not exist`,
      });
      const doomed = (await client.send(new CreateKeyCommand({ KeySpec: 'ECC_NIST_P256', KeyUsage: 'SIGN_VERIFY' }))).KeyMetadata!.Arn!;
      await client.send(new ScheduleKeyDeletionCommand({ KeyId: doomed, PendingWindowInDays: 7 }));
      await expect(kmsPublicJwk(client, doomed)).rejects.toMatchObject({ name: 'KMSInvalidStateException' });
    });
  });

  describe('the KMS stand-in refuses what KMS refuses', () => {

    const sign = (input: Partial<ConstructorParameters<typeof SignCommand>[0]>) =>
      client.send(new SignCommand({ KeyId: keyArn, Message: Buffer.alloc(32, 1), MessageType: 'DIGEST', SigningAlgorithm: 'ECDSA_SHA_256', ...input } as ConstructorParameters<typeof SignCommand>[0]));

    it.each([
      ['a missing KeyId', { KeyId: undefined }, 'ValidationException', /Value null at 'keyId'/],
      ['another signing algorithm', { SigningAlgorithm: 'RSASSA_PSS_SHA_256' }, 'InvalidKeyUsageException', /RSASSA_PSS_SHA_256/],
      ['a raw message over 4,096 bytes', { MessageType: 'RAW', Message: Buffer.alloc(4097, 1) }, 'ValidationException', /less than or equal to 4096/],
      ['a digest that is not 32 bytes', { Message: Buffer.alloc(20, 1) }, 'ValidationException', /Digest is invalid length/],
    ])('refuses %s', async (_name, input, type, message) => {
      await expect(sign(input as never)).rejects.toMatchObject({ name: type, message: expect.stringMatching(message) });
    });

    it('refuses GetPublicKey without a KeyId, and an unsigned request', async () => {
      await expect(client.send(new GetPublicKeyCommand({} as never))).rejects.toMatchObject({ name: 'ValidationException' });
      const response = await fetch(kms.endpoint, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-amz-json-1.1', 'X-Amz-Target': 'TrentService.GetPublicKey' },
        body: JSON.stringify({ KeyId: keyArn }),
      });
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({ __type: 'MissingAuthenticationTokenException', message: 'Missing Authentication Token' });
    });

    it('signs a raw message of up to 4,096 bytes as its SHA-256 digest, in DER', async () => {
      const message = Buffer.alloc(4096, 7);
      const { Signature, KeyId } = await sign({ MessageType: 'RAW', Message: message });
      expect(KeyId).toBe(keyArn);
      const { PublicKey } = await client.send(new GetPublicKeyCommand({ KeyId: keyArn }));
      const publicKey = createPublicKey({ key: Buffer.from(PublicKey!), format: 'der', type: 'spki' });
      expect(nodeVerify('sha256', message, { key: publicKey, dsaEncoding: 'der' }, Buffer.from(Signature!))).toBe(true);
    });
  });
});
