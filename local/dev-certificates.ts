import { createHash, createPrivateKey, generateKeyPairSync, randomBytes, sign, X509Certificate, type KeyObject } from 'node:crypto';
import { isIP } from 'node:net';

/**
 * A development certificate authority and the server certificates it issues, for HTTPS
 * identity providers run on this machine (tests, `npm run demo`): the running service trusts
 * the CA, nothing else does. ECDSA P-256 with SHA-256, X.509 v3 (RFC 5280), built with
 * node:crypto and a small DER writer so no OpenSSL binary is needed.
 */

export interface DevCertificateAuthority {
  /** PEM of the CA certificate: what a client adds to its trust. */
  certPem: string;
  keyPem: string;
  /** Issues a TLS server certificate for host names and IP addresses. */
  issueServerCertificate(names: readonly string[], options?: { days?: number; now?: Date }): DevServerCertificate;
}

/** A TLS server certificate and its private key, both PEM. */
export interface DevServerCertificate {
  certPem: string;
  keyPem: string;
}

/** A new self-signed CA (ten years unless `days` says otherwise). */
export function createDevCertificateAuthority(options: { commonName?: string; days?: number; now?: Date } = {}): DevCertificateAuthority {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const now = options.now ?? new Date();
  const name = distinguishedName(options.commonName ?? 'modelgate development CA');
  const caKeyId = keyIdentifier(publicKey);
  const certDer = certificate({
    issuer: name,
    subject: name,
    publicKey,
    signingKey: privateKey,
    now,
    days: options.days ?? 3650,
    extensions: [
      extension('2.5.29.19', true, seq(bool(true))), // basicConstraints: CA
      extension('2.5.29.15', true, bitString(Buffer.from([0x86]), 1)), // keyUsage: digitalSignature, keyCertSign, cRLSign
      extension('2.5.29.14', false, octetString(caKeyId)), // subjectKeyIdentifier
    ],
  });
  return fromCa(toPem(certDer, 'CERTIFICATE'), privateKey, name, caKeyId);
}

/** A CA from its PEMs, for example one kept on disk between runs. */
export function loadDevCertificateAuthority(certPem: string, keyPem: string): DevCertificateAuthority {
  const cert = new X509Certificate(certPem);
  return fromCa(certPem, createPrivateKey(keyPem), subjectDer(cert), keyIdentifier(cert.publicKey));
}

function fromCa(certPem: string, caKey: KeyObject, caName: Buffer, caKeyId: Buffer): DevCertificateAuthority {
  return {
    certPem,
    keyPem: caKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    issueServerCertificate(names, issueOptions = {}) {
      const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      const altNames = names.map((entry) => {
        const family = isIP(entry);
        if (family === 0) return tagged(0x82, Buffer.from(entry, 'ascii')); // dNSName
        return tagged(0x87, ipBytes(entry, family)); // iPAddress
      });
      const certDer = certificate({
        issuer: caName,
        subject: distinguishedName(names[0] ?? 'localhost'),
        publicKey,
        signingKey: caKey,
        now: issueOptions.now ?? new Date(),
        days: issueOptions.days ?? 825,
        extensions: [
          extension('2.5.29.19', true, seq()), // basicConstraints: not a CA
          extension('2.5.29.15', true, bitString(Buffer.from([0x80]), 7)), // keyUsage: digitalSignature
          extension('2.5.29.37', false, seq(oid('1.3.6.1.5.5.7.3.1'))), // extKeyUsage: serverAuth
          extension('2.5.29.17', false, seq(...altNames)), // subjectAltName
          extension('2.5.29.14', false, octetString(keyIdentifier(publicKey))),
          extension('2.5.29.35', false, seq(tagged(0x80, caKeyId))), // authorityKeyIdentifier
        ],
      });
      return { certPem: toPem(certDer, 'CERTIFICATE'), keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
    },
  };
}

interface CertificateFields {
  issuer: Buffer;
  subject: Buffer;
  publicKey: KeyObject;
  signingKey: KeyObject;
  now: Date;
  days: number;
  extensions: Buffer[];
}

/** RFC 5280 §4.1. */
function certificate(fields: CertificateFields): Buffer {
  const ecdsaWithSha256 = seq(oid('1.2.840.10045.4.3.2'));
  const serial = randomBytes(16);
  serial[0]! &= 0x7f; // positive
  serial[0]! |= 0x01; // and no leading zero to strip
  // Backdated an hour so a client whose clock lags a little accepts it.
  const notBefore = new Date(fields.now.getTime() - 3600_000);
  const notAfter = new Date(fields.now.getTime() + fields.days * 86_400_000);
  const tbs = seq(
    tagged(0xa0, integer(Buffer.from([2]))), // version v3
    integer(serial),
    ecdsaWithSha256,
    fields.issuer,
    seq(time(notBefore), time(notAfter)),
    fields.subject,
    fields.publicKey.export({ type: 'spki', format: 'der' }),
    tagged(0xa3, seq(...fields.extensions)),
  );
  const signature = sign('sha256', tbs, fields.signingKey); // DER ECDSA-Sig-Value, as X.509 wants
  return seq(tbs, ecdsaWithSha256, bitString(signature, 0));
}

function distinguishedName(commonName: string): Buffer {
  return seq(set(seq(oid('2.5.4.3'), tagged(0x0c, Buffer.from(commonName, 'utf8')))));
}

function subjectDer(cert: X509Certificate): Buffer {
  // The subject is the sixth element of TBSCertificate: walk the DER rather than re-encode the text form.
  const der = cert.raw;
  const tbs = children(children(der, 0)[0]!, 0);
  return tbs[5]!;
}

/** The encoded children of the constructed element at `offset`. */
function children(der: Buffer, offset: number): Buffer[] {
  const { headerLength, length } = readLength(der, offset);
  const out: Buffer[] = [];
  let cursor = offset + headerLength;
  const end = cursor + length;
  while (cursor < end) {
    const child = readLength(der, cursor);
    out.push(der.subarray(cursor, cursor + child.headerLength + child.length));
    cursor += child.headerLength + child.length;
  }
  return out;
}

function readLength(der: Buffer, offset: number): { headerLength: number; length: number } {
  const first = der[offset + 1]!;
  if (first < 0x80) return { headerLength: 2, length: first };
  const bytes = first & 0x7f;
  return { headerLength: 2 + bytes, length: der.readUIntBE(offset + 2, bytes) };
}

/** RFC 5280 §4.2.1.2 method 1: SHA-1 of the subjectPublicKey bits. */
function keyIdentifier(publicKey: KeyObject): Buffer {
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  // For an EC P-256 SPKI the BIT STRING holding the point is the last 66 bytes (tag, length, 0 unused bits, 65-byte point).
  return createHash('sha1').update(spki.subarray(spki.length - 65)).digest();
}

function ipBytes(address: string, family: number): Buffer {
  if (family === 4) return Buffer.from(address.split('.').map(Number));
  const [head, tail = ''] = address.split('::') as [string, string?];
  const parse = (part: string) => (part ? part.split(':').map((g) => parseInt(g, 16)) : []);
  const h = parse(head);
  const t = address.includes('::') ? parse(tail) : [];
  const groups = [...h, ...new Array<number>(8 - h.length - t.length).fill(0), ...t];
  const out = Buffer.alloc(16);
  groups.forEach((g, i) => out.writeUInt16BE(g, i * 2));
  return out;
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return seq(oid(id), ...(critical ? [bool(true)] : []), octetString(value));
}

function time(date: Date): Buffer {
  const iso = date.toISOString().replace(/[-:T]/g, '').slice(0, 14) + 'Z'; // YYYYMMDDHHMMSSZ
  // RFC 5280 §4.1.2.5: UTCTime through 2049, GeneralizedTime from 2050.
  return date.getUTCFullYear() < 2050 ? tagged(0x17, Buffer.from(iso.slice(2), 'ascii')) : tagged(0x18, Buffer.from(iso, 'ascii'));
}

function oid(dotted: string): Buffer {
  const [first, second, ...rest] = dotted.split('.').map(Number) as [number, number, ...number[]];
  const bytes = [first * 40 + second];
  for (const arc of rest) {
    const chunk = [arc & 0x7f];
    for (let value = arc >> 7; value > 0; value >>= 7) chunk.unshift((value & 0x7f) | 0x80);
    bytes.push(...chunk);
  }
  return tagged(0x06, Buffer.from(bytes));
}

function integer(bytes: Buffer): Buffer {
  return tagged(0x02, bytes[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), bytes]) : bytes);
}

function bool(value: boolean): Buffer {
  return tagged(0x01, Buffer.from([value ? 0xff : 0]));
}

function bitString(bytes: Buffer, unusedBits: number): Buffer {
  return tagged(0x03, Buffer.concat([Buffer.from([unusedBits]), bytes]));
}

function octetString(bytes: Buffer): Buffer {
  return tagged(0x04, bytes);
}

function seq(...items: Buffer[]): Buffer {
  return tagged(0x30, Buffer.concat(items));
}

function set(...items: Buffer[]): Buffer {
  return tagged(0x31, Buffer.concat(items));
}

function tagged(tag: number, content: Buffer): Buffer {
  const length = content.length;
  let header: number[];
  if (length < 0x80) header = [tag, length];
  else if (length < 0x100) header = [tag, 0x81, length];
  else header = [tag, 0x82, length >> 8, length & 0xff];
  return Buffer.concat([Buffer.from(header), content]);
}

function toPem(der: Buffer, label: string): string {
  const body = der.toString('base64').match(/.{1,64}/g)!.join('\n');
  return `-----BEGIN ${label}-----\n${body}\n-----END ${label}-----\n`;
}
