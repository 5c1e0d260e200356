import { join } from 'node:path';
import { decodeProtectedHeader } from 'jose';
import { hashApiKey } from '../../../lambdas/accounts/api-keys';
import { apiRequestInit, type ApiRequest } from '../../../local/demo';
import { exchangeForm } from '../../../local/exchange-form';
import type { DemoCredentials } from '../../../local/seed';
import type { RuntimeStores } from '../../support/accounts';
import { AUDIENCE, CONSTRUCT_IDS, SUBJECT, closeBundleWorkspace, loopbackIssuerEnvironment, openBundleWorkspace, seedDemo, type BundleWorkspace } from '../../support/bundled-stack';
import { synthesizeEmbeddedModelgate } from '../../support/cloud-assembly';
import { IamGate } from '../../support/iam/iam-gate';
import { deployLocally, type LocalDeployment } from '../../support/local-deployment';

/**
 * The construct as a user's own CDK app holds it, `new Modelgate(stack, 'Gateway', { instance:
 * 'Embedded', exchangeRateLimit: 30, corsAllowedOrigins: [two origins], publicCatalog: true })`
 * in their stack `Platform`, deployed as `useBundledStack` deploys the stack, from its own cloud
 * assembly, behind its own IAM gate.
 */
describe('an instance in a stack of its user, served from its packages', () => {
  let workspace: BundleWorkspace;
  let embedded: LocalDeployment;
  let embeddedIam: IamGate;
  let embeddedStores: RuntimeStores;
  let embeddedDemo: DemoCredentials;
  const pageOrigins = ['https://app.example.com', 'https://admin.example.com'];
  const embeddedCall = async (path: string, init: ApiRequest & { method?: string } = {}) => {
    // The instance has no custom domain: its stage URL is its API base URL.
    const response = await embedded.gateway.fetch(`${embedded.gateway.origin}/${embedded.gateway.stageName}/api/v1${path}`, apiRequestInit(init.method ?? 'GET', init));
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };

  beforeAll(async () => {
    workspace = await openBundleWorkspace();
    const assembly = synthesizeEmbeddedModelgate(join(workspace.outdir, 'embedded.out'), {
      instance: 'Embedded',
      exchangeRateLimit: 30,
      corsAllowedOrigins: pageOrigins,
      publicCatalog: true,
    });
    embeddedIam = new IamGate({ stackName: assembly.stackName, template: assembly.template });
    embedded = await deployLocally(assembly, { iam: embeddedIam, extraEnvironment: loopbackIssuerEnvironment(workspace.caFile) });
    ({ stores: embeddedStores, demo: embeddedDemo } = await seedDemo(embedded, join(workspace.outdir, 'embedded-demo.json'), 'https://unused'));
  }, 180_000);

  afterAll(async () => {
    embeddedStores?.destroy();
    await embedded?.stop();
    await closeBundleWorkspace(workspace);
  });

  it("runs the instance's functions from their packages under their construct ids, with the instance's settings", () => {
    expect(Object.keys(embedded.functions).sort()).toEqual(CONSTRUCT_IDS);
    const stageUrlOfInstance = `${embedded.gateway.origin}/${embedded.gateway.stageName}/api/v1`;
    for (const id of ['Catalog', 'TokenExchange', 'Management', 'Inference', 'Jwks']) {
      expect([id, embedded.functions[id]!.spec.environment.API_BASE_URL]).toEqual([id, stageUrlOfInstance]);
    }
    expect(embedded.functions.TokenExchange!.spec.environment.EXCHANGE_RATE_LIMIT).toBe('30');
    expect(embedded.functions.Management!.spec.environment.EXCHANGE_RATE_LIMIT).toBe('30');
  });

  it('registers its own signing key, tagged with the instance, and exchanges a workload token signed with it that its catalog accepts', async () => {
    const [key] = Object.values(embedded.assembly.template.Resources).filter((resource) => resource.Type === 'AWS::KMS::Key');
    expect(key!.Properties!.Tags).toEqual([{ Key: 'modelgate:access-token-signing', Value: 'Embedded' }]);
    const kid = Object.values(embedded.customResources)[0]!.PhysicalResourceId;
    expect((await embeddedCall('/oauth/jwks')).body.keys.map((jwk: { kid: string }) => jwk.kid)).toEqual([kid]);

    const issuer = await embeddedCall('/workload-identity/issuers', {
      method: 'POST',
      key: embeddedDemo.keys.managementReadWrite,
      json: { name: 'Embedded suite identity provider', issuer_url: workspace.identityProvider.issuerUrl },
    });
    const policy = await embeddedCall('/workload-identity/policies', {
      method: 'POST',
      key: embeddedDemo.keys.managementReadWrite,
      json: { name: 'Embedded worker', issuer_id: issuer.body.data.id, subject: SUBJECT, audience: AUDIENCE, api_key_hash: hashApiKey(embeddedDemo.keys.workspace) },
    });
    const exchanged = await embeddedCall('/oauth/token', {
      method: 'POST',
      form: exchangeForm(workspace.identityProvider.sign({ sub: SUBJECT, aud: AUDIENCE }), policy.body.data.id),
    });
    expect([issuer.status, policy.status, exchanged.status]).toEqual([201, 201, 200]);
    expect(decodeProtectedHeader(exchanged.body.access_token).kid).toBe(kid);
    const catalog = await embeddedCall('/models/user?limit=2', { key: exchanged.body.access_token });
    expect([catalog.status, catalog.body.data.length]).toEqual([200, 2]);
  });

  it('answers pages on its allowed origins only, preflights and the gateway\'s own answers included, and lists its catalog without a key', async () => {
    const stageUrlOfInstance = `${embedded.gateway.origin}/${embedded.gateway.stageName}/api/v1`;
    for (const id of ['Catalog', 'TokenExchange', 'Management', 'Inference', 'Jwks']) {
      expect([id, embedded.functions[id]!.spec.environment.CORS_ALLOWED_ORIGINS]).toEqual([id, pageOrigins.join(',')]);
    }
    const other = 'https://other.example.com';
    const from = (origin: string, path: string, init: RequestInit = {}) =>
      embedded.gateway.fetch(`${stageUrlOfInstance}${path}`, { ...init, headers: { ...init.headers, Origin: origin } });
    const preflight = { method: 'OPTIONS', headers: { 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'authorization' } };
    for (const origin of pageOrigins) {
      const answer = await from(origin, '/models/user', preflight);
      expect([origin, answer.status, answer.headers.get('access-control-allow-origin')]).toEqual([origin, 204, origin]);
      expect(embedded.gateway.requests.at(-1)!.functionLogicalId).toBeUndefined();
    }
    // Another origin is told one it is not: its browser keeps the answer from its page.
    expect((await from(other, '/models/user', preflight)).headers.get('access-control-allow-origin')).not.toBe(other);
    const listed = await from(pageOrigins[1]!, '/models?limit=1');
    expect([listed.status, listed.headers.get('access-control-allow-origin'), listed.headers.get('vary')]).toEqual([200, pageOrigins[1], 'Origin']);
    expect(((await listed.json()) as { data: unknown[] }).data).toHaveLength(1);
    const readByOther = await from(other, '/models?limit=1');
    expect([readByOther.status, readByOther.headers.get('access-control-allow-origin')]).toEqual([200, null]);
    const unknown = await from(pageOrigins[0]!, '/no/such/path');
    expect([unknown.status, unknown.headers.get('access-control-allow-origin')]).toEqual([404, pageOrigins[0]]);
  });

  it("makes no AWS request the instance's roles deny", () => {
    expect(embeddedIam.errors).toEqual([]);
    expect(embeddedIam.denials).toEqual([]);
    expect(Object.keys(embeddedIam.seenActions()).sort()).toEqual(['Catalog', 'Jwks', 'Management', 'SigningKeyRegistrar', 'TokenExchange']);
    expect(embeddedIam.principal('TokenExchange')!.roleArn).toMatch(/:role\/GatewayTokenExchangeRole[0-9A-F]{8}$/);
  });
});
