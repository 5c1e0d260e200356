import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateKeyCommand } from '@aws-sdk/client-kms';
import { compactVerify, createRemoteJWKSet, decodeProtectedHeader, importJWK, jwtVerify } from 'jose';
import { hashApiKey } from '../../lambdas/accounts/api-keys';
import type { Clock } from '../../lambdas/clock';
import { KmsSigner, createKmsSigningKeyLike, kmsPublicJwk } from '../../lambdas/aws/kms-signer';
import { DynamoFederationStore } from '../../lambdas/aws/dynamo-federation-store';
import { TABLE_SCHEMAS } from '../../lambdas/aws/table-schemas';
import { readDevCertificateAuthority } from '../../local/dev-ca';
import { runOps } from '../../ops/run';
import { connectTarget } from '../../ops/target';
import { connectToRuntime, type RuntimeStores } from '../support/accounts';
import { makeIssuer, makePolicy } from '../support/federation-fixtures';
import { startIdentityProvider, type TestIdentityProvider } from '../support/identity-provider';
import { startKmsStandIn } from '../support/kms-stand-in';
import { startTestService, type TestService } from '../support/local-service';
import { exchangeForm } from '../../local/exchange-form';

/** Real time, moved forward by hand: the service's view of "later" without waiting. */
class OffsetClock implements Clock {
  offsetMs = 0;
  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }
}

describe('npm run ops -- signing-key rotate, against the running local service', () => {
  const clock = new OffsetClock();
  let service: TestService;
  let stores: RuntimeStores;
  let idp: TestIdentityProvider;
  let policyId: string;

  beforeAll(async () => {
    service = await startTestService({ clock });
    stores = connectToRuntime(service.runtime);
    idp = await startIdentityProvider({ ca: readDevCertificateAuthority(service.runtime.dataDir) });
    const federation = new DynamoFederationStore(stores.documentClient, TABLE_SCHEMAS.policies.localName);
    const organizationId = service.runtime.demo.organizationId;
    const issuer = makeIssuer({ organizationId, issuerUrl: idp.issuerUrl });
    await federation.createIssuer(issuer);
    const policy = makePolicy({
      organizationId,
      issuerId: issuer.id,
      subject: 'workload',
      audience: 'modelgate',
      apiKeyHash: hashApiKey(service.runtime.demo.keys.workspace),
    });
    await federation.createPolicy(policy);
    policyId = policy.id;
  });
  afterAll(async () => {
    await idp?.close();
    stores?.destroy();
    await service?.stop();
  });

  const exchange = async (): Promise<string> => {
    const response = await service.call('/oauth/token', {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(exchangeForm(idp.sign({ sub: 'workload', aud: 'modelgate', jti: randomUUID() }), policyId)).toString(),
    });
    expect(response.status).toBe(200);
    return response.body.access_token as string;
  };

  const ops = async (...argv: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runOps([...argv, '--data-dir', service.runtime.dataDir], { out: (t) => out.push(t), err: (t) => err.push(t) }, connectTarget);
    return { code, out: out.join('\n'), err: err.join('\n') };
  };

  it('publishes a new key before it signs, switches the running service within the recheck time, and keeps old tokens verifying', async () => {
    const before = await exchange();
    const oldKid = decodeProtectedHeader(before).kid!;

    const rotated = await ops('signing-key', 'rotate', '--json');
    expect([rotated.code, rotated.err]).toEqual([0, '']);
    const { active, retired } = JSON.parse(rotated.out);
    expect(active).toMatchObject({ status: 'active', key_ref: expect.stringMatching(/^local:signing-key-\d{8}T\d{6}Z-[0-9a-f]{6}\.pem$/) });
    expect(retired).toEqual([expect.objectContaining({ kid: oldKid, status: 'retired' })]);

    // Published: both keys, the new one first (a key set container re-reads the records every 5 s at most).
    const published = (await service.call('/oauth/jwks')).body.keys.map((key: { kid: string }) => key.kid);
    expect(published).toEqual([active.kid, oldKid]);

    // The running service still signs with the key it knows until it re-reads the records...
    expect(decodeProtectedHeader(await exchange()).kid).toBe(oldKid);
    // ...which it does within 30 seconds, without a restart.
    clock.offsetMs += 31_000;
    const after = await exchange();
    expect(decodeProtectedHeader(after).kid).toBe(active.kid);

    const jwks = createRemoteJWKSet(new URL(`${service.runtime.baseUrl}/oauth/jwks`));
    for (const token of [before, after]) {
      await expect(jwtVerify(token, jwks, { issuer: service.runtime.baseUrl, typ: 'at+jwt' })).resolves.toBeDefined();
    }

    const listed = await ops('signing-key', 'list');
    expect(listed.code).toBe(0);
    expect(listed.out).toContain(`${active.kid}  active`);
    expect(listed.out).toContain(`${oldKid}  retired`);
  });
});

describe('a KMS signing key made like the active one', () => {
  it('copies the key policy and tags, and signs ES256 tokens that verify against its public key', async () => {
    const kms = await startKmsStandIn();
    try {
      const client = kms.client();
      const policy = JSON.stringify({ Version: '2012-10-17', Statement: [{ Sid: 'only-exchange', Effect: 'Deny', Principal: '*', Action: 'kms:Sign', Resource: '*' }] });
      const tags = [{ TagKey: 'modelgate:access-token-signing', TagValue: 'Modelgate' }];
      const { KeyMetadata } = await client.send(new CreateKeyCommand({ KeySpec: 'ECC_NIST_P256', KeyUsage: 'SIGN_VERIFY', Policy: policy, Tags: tags }));

      const created = await createKmsSigningKeyLike(client, KeyMetadata!.Arn!, 'rotated');
      expect(created.keyArn).not.toBe(KeyMetadata!.Arn);
      const createKey = kms.requests.filter((r) => r.operation === 'CreateKey').at(-1)!.body;
      expect(createKey).toMatchObject({ KeySpec: 'ECC_NIST_P256', KeyUsage: 'SIGN_VERIFY', Policy: policy, Tags: tags });
      expect(created).toEqual({ keyArn: created.keyArn, ...(await kmsPublicJwk(client, created.keyArn)) });

      const signer = new KmsSigner(client, created.keyArn, created.kid);
      const input = `${Buffer.from('{"alg":"ES256"}').toString('base64url')}.${Buffer.from('{"sub":"x"}').toString('base64url')}`;
      const signature = Buffer.from(await signer.sign(Buffer.from(input))).toString('base64url');
      await expect(compactVerify(`${input}.${signature}`, await importJWK(created.publicJwk, 'ES256'))).resolves.toBeDefined();
    } finally {
      await kms.stop();
    }
  });
});

describe('a restart of the local service after signing-key rotate', () => {
  let dataDir: string;
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('keeps the rotated key active, as a redeploy does in AWS', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'modelgate-rotate-restart-'));
    const ops = async (...argv: string[]) => {
      const out: string[] = [];
      const code = await runOps([...argv, '--data-dir', dataDir], { out: (t) => out.push(t), err: () => undefined }, connectTarget);
      return { code, out: out.join('\n') };
    };
    // Kept on disk in one folder across the restart.
    const persisted = { dataDir, persist: true, logLevel: 'ERROR' } as const;
    let service = await startTestService(persisted);
    let rotated: { kid: string };
    try {
      const result = await ops('signing-key', 'rotate', '--json');
      expect(result.code).toBe(0);
      rotated = JSON.parse(result.out).active;
    } finally {
      await service.stop();
    }

    service = await startTestService(persisted);
    const { runtime } = service;
    try {
      const listed = await ops('signing-key', 'list', '--json');
      const records = JSON.parse(listed.out).data as { kid: string; status: string }[];
      expect(records.filter((record) => record.status === 'active').map((record) => record.kid)).toEqual([rotated.kid]);
      const jwks = (await (await fetch(`${runtime.baseUrl}/oauth/jwks`)).json()) as { keys: { kid: string }[] };
      expect(jwks.keys[0]!.kid).toBe(rotated.kid);
    } finally {
      await service.stop();
    }
  }, 120_000);
});
