import { X509Certificate } from 'node:crypto';
import { createDevCertificateAuthority, loadDevCertificateAuthority } from '../../local/dev-certificates';

describe('development certificate authority', () => {
  const ca = createDevCertificateAuthority({ commonName: 'test CA' });

  it('makes a CA certificate that signs server certificates for names and addresses', () => {
    const caCert = new X509Certificate(ca.certPem);
    expect(caCert.ca).toBe(true);
    expect(caCert.subject).toBe('CN=test CA');
    const server = new X509Certificate(ca.issueServerCertificate(['idp.localhost', '127.0.0.1', '::1']).certPem);
    expect(server.ca).toBe(false);
    expect(server.checkIssued(caCert)).toBe(true);
    expect(server.verify(caCert.publicKey)).toBe(true);
    expect(server.checkHost('idp.localhost')).toBe('idp.localhost');
    expect(server.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(server.checkIP('::1')).toBe('::1');
    expect(server.checkHost('other.localhost')).toBeUndefined();
    expect(server.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']);
  });

  it('is valid from an hour ago for the requested number of days', () => {
    const now = new Date('2026-11-21T12:00:00Z');
    const server = new X509Certificate(ca.issueServerCertificate(['localhost'], { now, days: 30 }).certPem);
    expect(new Date(server.validFrom).toISOString()).toBe('2026-11-21T11:00:00.000Z');
    expect(new Date(server.validTo).toISOString()).toBe('2026-12-21T12:00:00.000Z');
  });

  it('loads back from its PEMs and keeps issuing certificates the same CA signed', () => {
    const reloaded = loadDevCertificateAuthority(ca.certPem, ca.keyPem);
    const server = new X509Certificate(reloaded.issueServerCertificate(['localhost']).certPem);
    expect(server.checkIssued(new X509Certificate(ca.certPem))).toBe(true);
    expect(server.verify(new X509Certificate(ca.certPem).publicKey)).toBe(true);
  });
});
