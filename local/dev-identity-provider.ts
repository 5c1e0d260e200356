import { generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { JWK } from 'jose';
import type { DevCertificateAuthority } from './dev-certificates';

/**
 * A minimal OpenID identity provider for trying workload identity federation on one
 * machine (`npm run demo`): HTTPS with a certificate from the local runtime's development
 * CA, a discovery document, a JWK Set with one ES256 key, and a signer for workload tokens,
 * as a CI system or a Kubernetes cluster would issue them.
 */
export interface DevIdentityProvider {
  /** `https://127.0.0.1:<port>`: the `iss` of its tokens and the issuer URL to configure. */
  readonly issuerUrl: string;
  readonly kid: string;
  /** Signs an ES256 JWT; `iss`, `iat`, `exp` (+10 minutes) and a random `jti` are added unless given. */
  sign(claims: Record<string, unknown>): string;
  /**
   * From now on `GET /token` answers a freshly signed JWT with these claims (a workload's view);
   * `GET /token?aud=<value>` signs one for another audience, to see the settings page's policy
   * tester refuse it.
   */
  serveTokens(claims: Record<string, unknown>): void;
  close(): Promise<void>;
}

/** Starts the identity provider on a loopback port (any free one by default), its server certificate issued by `ca`. */
export async function startDevIdentityProvider(ca: DevCertificateAuthority, port = 0): Promise<DevIdentityProvider> {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const kid = `demo-${randomBytes(4).toString('hex')}`;
  const jwk: JWK = { ...(publicKey.export({ format: 'jwk' }) as JWK), kid, alg: 'ES256', use: 'sig' };
  const certificate = ca.issueServerCertificate(['127.0.0.1', 'localhost']);
  let issuerUrl = '';
  let tokenClaims: Record<string, unknown> | undefined;
  const signToken = (claims: Record<string, unknown>) =>
    signEs256({ alg: 'ES256', typ: 'JWT', kid }, { iss: issuerUrl, iat: now(), exp: now() + 600, jti: randomBytes(12).toString('hex'), ...claims }, privateKey);
  const server: Server = createServer({ cert: certificate.certPem, key: certificate.keyPem }, (request, response) => {
    const url = new URL(request.url ?? '/', 'https://idp.invalid');
    const path = url.pathname;
    if (path === '/token' && tokenClaims) {
      const audience = url.searchParams.get('aud');
      response.writeHead(200, { 'content-type': 'application/jwt', 'cache-control': 'no-store' });
      response.end(signToken(audience === null ? tokenClaims : { ...tokenClaims, aud: audience.slice(0, 512) }));
      return;
    }
    const documents: Record<string, unknown> = {
      '/.well-known/openid-configuration': {
        issuer: issuerUrl,
        jwks_uri: `${issuerUrl}/.well-known/jwks.json`,
        id_token_signing_alg_values_supported: ['ES256'],
      },
      '/.well-known/jwks.json': { keys: [jwk] },
    };
    const body = path !== undefined && Object.hasOwn(documents, path) ? documents[path] : undefined;
    response.writeHead(body ? 200 : 404, { 'content-type': 'application/json', 'cache-control': 'max-age=300' });
    response.end(JSON.stringify(body ?? { error: 'not found' }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  issuerUrl = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    issuerUrl,
    kid,
    sign: signToken,
    serveTokens: (claims) => {
      tokenClaims = claims;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const now = () => Math.floor(Date.now() / 1000);

function signEs256(header: object, payload: object, key: KeyObject): string {
  const input = `${Buffer.from(JSON.stringify(header)).toString('base64url')}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`;
  const signature = sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' });
  return `${input}.${signature.toString('base64url')}`;
}
