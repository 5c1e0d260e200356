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
import { functionCredentials } from '../../../local/function-principals';
import { SYNTH_ENV } from '../../support/cloud-assembly';
import { CLAUDE, CLAUDE_ON_BEDROCK } from '../../support/provider-apis';
import { startBedrockStandIn, type BedrockStandIn } from '../../support/providers/bedrock-stand-in';

/**
 * The construct as a user's own CDK app holds it, `new Modelgate(stack, 'Gateway', { instance:
 * 'Embedded', exchangeRateLimit: 30, corsAllowedOrigins: [two origins], publicCatalog: true })`
 * in their stack `Platform`, deployed as `useBundledStack` deploys the stack, from its own cloud
 * assembly, behind its own IAM gate, which also decides its Bedrock calls (one model configured).
 */
describe('an instance in a stack of its user, served from its packages', () => {
  let workspace: BundleWorkspace;
  let embedded: LocalDeployment;
  let embeddedIam: IamGate;
  let embeddedStores: RuntimeStores;
  let embeddedDemo: DemoCredentials;
  let bedrock: BedrockStandIn;
  const pageOrigins = ['https://app.example.com', 'https://admin.example.com'];
  const embeddedCall = async (path: string, init: ApiRequest & { method?: string } = {}) => {
    // The instance has no custom domain: its stage URL is its API base URL.
    const response = await embedded.gateway.fetch(`${embedded.gateway.origin}/${embedded.gateway.stageName}/api/v1${path}`, apiRequestInit(init.method ?? 'GET', init));
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };

  beforeAll(async () => {
    workspace = await openBundleWorkspace();
    // Bedrock as AWS serves it: signed by the function's own credentials, decided by the instance's IAM gate.
    bedrock = await startBedrockStandIn({
      region: SYNTH_ENV.region,
      credentials: functionCredentials('inference'),
      models: [CLAUDE_ON_BEDROCK, 'anthropic.claude-unconfigured-v1:0'],
      ca: workspace.ca,
      authorize: (request) => embeddedIam.standInAuthorizer()(request),
    });
    const assembly = synthesizeEmbeddedModelgate(join(workspace.outdir, 'embedded.out'), {
      instance: 'Embedded',
      exchangeRateLimit: 30,
      corsAllowedOrigins: pageOrigins,
      publicCatalog: true,
      inferenceUpstreams: { 'amazon-bedrock': { api: 'bedrock', baseUrl: bedrock.baseUrl, models: { [CLAUDE]: CLAUDE_ON_BEDROCK } } },
    });
    embeddedIam = new IamGate({ stackName: assembly.stackName, template: assembly.template });
    const extraEnvironment = { ...loopbackIssuerEnvironment(workspace.caFile), Inference: { NODE_EXTRA_CA_CERTS: workspace.caFile } };
    embedded = await deployLocally(assembly, { iam: embeddedIam, extraEnvironment });
    ({ stores: embeddedStores, demo: embeddedDemo } = await seedDemo(embedded, join(workspace.outdir, 'embedded-demo.json'), 'https://unused'));
  }, 180_000);

  afterAll(async () => {
    embeddedStores?.destroy();
    await embedded?.stop();
    await bedrock?.stop();
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
    const [key] = Object.values(embedded.assembly.template.Resources).filter((resource) => resource.Type === 'AWS::KMS::Key' && resource.Properties?.KeyUsage === 'SIGN_VERIFY');
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

  it('serves a Bedrock completion from its package, signed with its own role and allowed by its policy for the configured model only', async () => {
    for (const stream of [false, true]) {
      const answer = await embedded.gateway.fetch(`${embedded.gateway.origin}/${embedded.gateway.stageName}/api/v1/chat/completions`, apiRequestInit('POST', {
        key: embeddedDemo.keys.workspace,
        json: { model: CLAUDE, messages: [{ role: 'user', content: 'hello there' }], stream, provider: { only: ['amazon-bedrock'] } },
      }));
      const text = await answer.text();
      expect([answer.status, text]).toEqual([200, expect.stringContaining('"provider":"Amazon Bedrock"')]);
      expect(text).toContain(stream ? '"content":"hello "' : '"content":"echo: hello there"');
    }
    expect(bedrock.received.map((request) => [request.modelId, request.httpVersion, /Credential=([^/]+)/.exec(String(request.headers.authorization))![1]])).toEqual([
      [CLAUDE_ON_BEDROCK, '2.0', 'Inference'],
      [CLAUDE_ON_BEDROCK, '2.0', 'Inference'],
    ]);
    expect(embeddedIam.seenActions().Inference).toMatchObject({ 'bedrock:InvokeModel': { allowed: 1, denied: 0 }, 'bedrock:InvokeModelWithResponseStream': { allowed: 1, denied: 0 } });
    // The same policy, asked apart from the suite's gate: another model, or another function, is refused.
    const gate = new IamGate({ stackName: embedded.assembly.stackName, template: embedded.assembly.template });
    const ask = (fn: string, resource: string) => gate.standInAuthorizer()({ action: 'bedrock:InvokeModel', accessKeyId: fn, resource });
    const region = SYNTH_ENV.region;
    await expect(ask('Inference', `arn:aws:bedrock:${region}:${SYNTH_ENV.account}:inference-profile/${CLAUDE_ON_BEDROCK}`)).resolves.toBe(true);
    await expect(ask('Inference', 'arn:aws:bedrock:eu-west-1::foundation-model/anthropic.claude-sonnet-5-v1:0')).resolves.toBe(true);
    await expect(ask('Inference', `arn:aws:bedrock:${region}::foundation-model/anthropic.claude-unconfigured-v1:0`)).resolves.toMatch(/is not authorized to perform: bedrock:InvokeModel/);
    await expect(ask('Management', `arn:aws:bedrock:${region}:${SYNTH_ENV.account}:inference-profile/${CLAUDE_ON_BEDROCK}`)).resolves.toMatch(/is not authorized/);
  });

  it("makes no AWS request the instance's roles deny", () => {
    expect(embeddedIam.errors).toEqual([]);
    expect(embeddedIam.denials).toEqual([]);
    expect(Object.keys(embeddedIam.seenActions()).sort()).toEqual(['Catalog', 'Inference', 'Jwks', 'Management', 'SigningKeyRegistrar', 'TokenExchange']);
    expect(embeddedIam.principal('TokenExchange')!.roleArn).toMatch(/:role\/GatewayTokenExchangeRole[0-9A-F]{8}$/);
  });
});
