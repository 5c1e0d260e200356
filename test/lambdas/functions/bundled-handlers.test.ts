import { createSocket } from 'node:dgram';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { CreateKeyCommand } from '@aws-sdk/client-kms';
import { PutSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { HTTPClient, OpenRouter } from '@openrouter/sdk';
import { createRemoteJWKSet, customFetch, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import OpenAI from 'openai';
import * as oauthClient from 'openid-client';
import { AccountsService } from '../../../lambdas/accounts/accounts-service';
import { hashApiKey } from '../../../lambdas/accounts/api-keys';
import { ACTING_KEY_CLAIM } from '../../../lambdas/credentials/access-token-verifier';
import { authorizationServerMetadata, protectedResourceMetadata } from '../../../lambdas/oauth/discovery';
import { OPENAPI_DOCUMENT } from '../../../lambdas/document/document';
import { CORS_ALLOWED_HEADERS } from '../../../lambdas/http/cors';
import { API_BASE_PATH, PAGES_BASE_PATH, ROUTES, resourcePath, servedMethods } from '../../../lambdas/routes';
import { KmsSigner } from '../../../lambdas/aws/kms-signer';
import { SIGNING_KEY_REGISTRATION_PROPERTIES } from '../../../lambdas/signing/registration-properties';
import { PUBLISHED_KEYS_CACHE_SECONDS } from '../../../lambdas/signing/cached-signing-keys';
import { DynamoAccountStore } from '../../../lambdas/aws/dynamo-account-store';
import { TABLE_SCHEMAS } from '../../../lambdas/aws/table-schemas';
import { createDevCertificateAuthority } from '../../../local/dev-certificates';
import { ensureDemoOrganization, seedCatalog, snapshotCatalog, type DemoCredentials } from '../../../local/seed';
import { TRACING_ENVIRONMENT } from '../../../lib/constructs/service-function';
import { signJwt } from '../../support/access-tokens';
import { eventually } from '../../support/eventually';
import { connectToRuntime, type RuntimeStores } from '../../support/accounts';
import { synthesizeEmbeddedModelgate, synthesizeModelgate } from '../../support/cloud-assembly';
import { FUNCTION_REQUIREMENTS } from '../../support/function-requirements';
import { IamGate } from '../../support/iam/iam-gate';
import { startIdentityProvider, type TestIdentityProvider } from '../../support/identity-provider';
import { startLambdaProcess, type LambdaProcess } from '../../support/lambda-process';
import { cloudFormationEvent, deployLocally, type LocalDeployment } from '../../support/local-deployment';
import { startScriptedUpstream, type ScriptedUpstream } from '../../support/scripted-upstream';
import { apiRequestInit, type ApiRequest } from '../../../local/demo';
import { dpopFetch, dpopProof, newDpopKey } from '../../../local/dpop-fetch';
import { exchangeForm } from '../../../local/exchange-form';

const ROOT = join(__dirname, '..', '..', '..');
const CONSTRUCT_IDS: string[] = Object.values(FUNCTION_REQUIREMENTS).map((fn) => fn.construct).sort();
const PROVIDER_KEY = 'sk-upstream-from-secrets-manager';
const SUBJECT = 'system:serviceaccount:payments:worker';
const AUDIENCE = 'modelgate-bundle-suite';
/** The stack's own domain in a hosted zone, serving the EU region on `eu.api.example.com`. */
const DOMAIN = {
  'modelgate:domainName': 'api.example.com',
  'modelgate:hostedZoneId': 'Z0123456789ABCDEFGHIJ',
  'modelgate:hostedZoneName': 'example.com',
  'modelgate:regionalHostnames': { eu: 'eu.api.example.com' },
};
const EU_ORIGIN = 'https://eu.api.example.com';

/**
 * What ships, serving the demo end to end: the app synthesized once as `cdk deploy` builds it
 * (real esbuild bundles), then, from the template and the cloud assembly alone, every function
 * package running in its own Node.js process with the environment the template gives it, its
 * tables, KMS key and secret created from their template definitions in local stand-ins, the
 * signing key registered by the registrar package through CloudFormation's `Create` event, and
 * the REST API served over HTTPS by routing the template's resources and methods to the
 * function each integration names, on the stage URL and on each hostname of the stack's custom
 * domain (the API's own and the regional ones), as the template's domain names and mappings say. Every request a function makes to DynamoDB, KMS and Secrets
 * Manager passes the IAM gate, evaluated against that function's role in the same template.
 * Real clients (fetch, jose, openai, the official SDK) talk to it.
 */
describe('the synthesized stack, served from its function packages', () => {
  let outdir: string;
  let deployment: LocalDeployment;
  let iam: IamGate;
  let identityProvider: TestIdentityProvider;
  let upstream: ScriptedUpstream;
  let stores: RuntimeStores;
  let demo: DemoCredentials;
  /** The API base URL: the custom domain's, as the `ApiUrl` output names it. */
  let apiUrl: string;
  /** The same API through the stage's execute-api URL. */
  let stageUrl: string;
  let signingKeyArn: string;
  let registeredKid: string;

  beforeAll(async () => {
    // One CA for the HTTPS services the functions call out to: the identity provider (token
    // exchange) and the inference upstream, each trusted through NODE_EXTRA_CA_CERTS.
    const ca = createDevCertificateAuthority({ commonName: 'bundle suite CA' });
    identityProvider = await startIdentityProvider({ ca });
    upstream = await startScriptedUpstream({ tls: ca.issueServerCertificate(['127.0.0.1']) });
    // Inside the project, so the SDK the packages leave external resolves from its node_modules,
    // as the Lambda runtime provides it.
    mkdirSync(join(ROOT, 'node_modules', '.cache'), { recursive: true });
    outdir = mkdtempSync(join(ROOT, 'node_modules', '.cache', 'modelgate-assembly-'));
    const caFile = join(outdir, 'outbound-ca.pem');
    writeFileSync(caFile, ca.certPem);

    const assembly = synthesizeModelgate(join(outdir, 'cdk.out'), {
      // An HTTPS provider that needs the key the stack's secret holds.
      'modelgate:inferenceUpstreams': { '*': upstream.baseUrl('alpha') },
      ...DOMAIN,
    });
    iam = new IamGate({ stackName: assembly.stackName, template: assembly.template });
    deployment = await deployLocally(assembly, {
      iam,
      extraEnvironment: {
        // Test-only: the identity provider runs on this machine, so its issuer URL is a
        // loopback one. A deployed stage refuses loopback issuers (lambdas/config.ts allows
        // MODELGATE_ALLOW_LOOPBACK_ISSUERS on the "local" stage only): the two functions that
        // judge issuer URLs, management (saving the issuer) and the token exchange (fetching its
        // keys), run as that stage. Its CA is no public one: NODE_EXTRA_CA_CERTS.
        TokenExchange: { MODELGATE_ALLOW_LOOPBACK_ISSUERS: '1', STAGE: 'local', NODE_EXTRA_CA_CERTS: caFile },
        Management: { MODELGATE_ALLOW_LOOPBACK_ISSUERS: '1', STAGE: 'local' },
        // Test-only: the upstream's certificate comes from the same private CA.
        Inference: { NODE_EXTRA_CA_CERTS: caFile },
      },
    });
    apiUrl = deployment.outputs.ApiUrl!;
    stageUrl = `${deployment.gateway.origin}/${deployment.gateway.stageName}/api/v1`;

    // What `npm start` seeds, through the same code, into the tables the template defines.
    stores = connectToRuntime({ dynamoEndpoint: deployment.dynamo.endpoint });
    await seedCatalog(stores.catalog);
    const accounts = new DynamoAccountStore(stores.documentClient, TABLE_SCHEMAS.keys.localName);
    demo = await ensureDemoOrganization(new AccountsService({ store: accounts }), accounts, join(outdir, 'demo.json'), apiUrl, () => undefined);

    // The operator's step after deploying (README): the provider key into the stack's secret.
    await deployment.secrets.client().send(new PutSecretValueCommand({ SecretId: deployment.outputs.ProviderCredentialsSecretArn, SecretString: JSON.stringify({ '*': PROVIDER_KEY }) }));

    signingKeyArn = deployment.outputs.SigningKeyArn!;
    registeredKid = Object.values(deployment.customResources)[0]!.PhysicalResourceId;
  }, 180_000);

  afterAll(async () => {
    stores?.destroy();
    await deployment?.stop();
    iam?.writeSeen(expect.getState().testPath);
    await upstream?.stop();
    await identityProvider?.close();
    if (outdir) rmSync(outdir, { recursive: true, force: true });
  });

  /** A request to the API through the gateway, as a client of the deployed stage makes it. */
  const call = async (path: string, init: ApiRequest & { method?: string } = {}) => {
    const response = await deployment.gateway.fetch(path.startsWith('https://') ? path : `${apiUrl}${path}`, apiRequestInit(init.method ?? 'GET', init));
    const text = await response.text();
    let parsed: any;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: response.status, headers: response.headers, text, body: parsed };
  };

  describe('wiring, from the template', () => {
    it('runs every function of the stack in its own process, from its package, with the handler, timeout and memory the template gives', () => {
      expect(Object.keys(deployment.functions).sort()).toEqual(CONSTRUCT_IDS);
      for (const fn of deployment.assembly.functions.filter((candidate) => CONSTRUCT_IDS.includes(candidate.constructId))) {
        const running = deployment.functions[fn.constructId]!;
        expect([fn.constructId, fn.properties.Handler, existsSync(join(fn.codeDir, 'index.mjs'))]).toEqual([fn.constructId, 'index.handler', true]);
        expect(running.spec).toMatchObject({ codeDir: fn.codeDir, timeoutSeconds: fn.properties.Timeout, memorySize: fn.properties.MemorySize });
      }
      expect(deployment.functions.Inference!.streaming).toBe(true);
      expect(Object.entries(deployment.functions).filter(([, fn]) => fn.streaming).map(([id]) => id)).toEqual(['Inference']);
    });

    it("gives each function the template's variables, resolved, and nothing else but the runtime's, its credentials and the stand-ins' endpoints", () => {
      const runtimeVariables = [
        'AWS_REGION', 'AWS_DEFAULT_REGION', 'AWS_LAMBDA_FUNCTION_NAME', 'AWS_LAMBDA_FUNCTION_VERSION', 'AWS_LAMBDA_FUNCTION_MEMORY_SIZE',
        'LAMBDA_TASK_ROOT', '_HANDLER', 'TZ', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY',
        'AWS_ENDPOINT_URL_DYNAMODB', 'AWS_ENDPOINT_URL_KMS', 'AWS_ENDPOINT_URL_SECRETS_MANAGER', 'AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED',
      ];
      const testOnly: Record<string, string[]> = {
        TokenExchange: ['MODELGATE_ALLOW_LOOPBACK_ISSUERS', 'NODE_EXTRA_CA_CERTS'],
        Management: ['MODELGATE_ALLOW_LOOPBACK_ISSUERS'],
        Inference: ['NODE_EXTRA_CA_CERTS'],
      };
      for (const fn of deployment.assembly.functions.filter((candidate) => CONSTRUCT_IDS.includes(candidate.constructId))) {
        const declared = deployment.resolver.resolve(fn.properties.Environment.Variables) as Record<string, string>;
        const environment = deployment.functions[fn.constructId]!.spec.environment;
        expect(Object.keys(environment).sort()).toEqual([...new Set([...Object.keys(declared), ...runtimeVariables, ...(testOnly[fn.constructId] ?? [])])].sort());
        const { STAGE, ...rest } = declared;
        expect(environment).toMatchObject(rest);
        expect(environment.STAGE).toBe(testOnly[fn.constructId]?.includes('MODELGATE_ALLOW_LOOPBACK_ISSUERS') ? 'local' : STAGE);
        expect(environment).toMatchObject({ NODE_OPTIONS: '--enable-source-maps', AWS_ACCESS_KEY_ID: fn.constructId, AWS_SECRET_ACCESS_KEY: 'local' });
      }
    });

    it("names the custom domain's URL as the API base URL of every function that issues, verifies or describes access tokens", () => {
      expect(apiUrl).toBe('https://api.example.com/api/v1');
      expect(stageUrl).toMatch(/^https:\/\/[a-z0-9]{10}\.execute-api\.us-east-1\.amazonaws\.com\/v1\/api\/v1$/);
      for (const id of ['Catalog', 'TokenExchange', 'Management', 'Inference', 'Jwks']) {
        expect([id, deployment.functions[id]!.spec.environment.API_BASE_URL]).toEqual([id, apiUrl]);
      }
    });

    it("serves the custom domain's hostnames from the template's domain names, each mapping the stage at its root", () => {
      expect([...deployment.gateway.customDomains].sort()).toEqual(['api.example.com', 'eu.api.example.com']);
    });

    it('routes each method of the template to the function its integration names, the one the route table means', () => {
      const constructOf = (logicalId: string) => deployment.assembly.functions.find((fn) => fn.logicalId === logicalId)!.constructId;
      const served = deployment.gateway.routes.map((route) => `${route.method} ${route.resourcePath} -> ${constructOf(route.functionLogicalId)}${route.streaming ? ' (stream)' : ''}`);
      // HEAD beside each GET, served by the GET route's function (RFC 9110 §9.3.2).
      const meant = ROUTES.flatMap((route) =>
        servedMethods([route.method]).map((method) => `${method} ${resourcePath(route)} -> ${FUNCTION_REQUIREMENTS[route.function].construct}${route.function === 'inference' ? ' (stream)' : ''}`),
      );
      expect(served.sort()).toEqual(meant.sort());
    });
  });

  describe('the signing key', () => {
    it('is registered from the registrar package as CloudFormation invokes it on the first deploy, reading the public key from KMS', async () => {
      const [created] = Object.values(deployment.customResources);
      expect(created!.PhysicalResourceId).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(created!.Data).toEqual({ Kid: created!.PhysicalResourceId });
      // The stack's key, created from its template definition, then read by the registrar.
      expect(deployment.kms.requests.slice(0, 2).map((r) => [r.operation, r.body.KeyId ?? null])).toEqual([
        ['CreateKey', null],
        ['GetPublicKey', signingKeyArn],
      ]);
      const jwks = await call('/oauth/jwks');
      expect(jwks.status).toBe(200);
      expect(jwks.body.keys.map((key: { kid: string }) => key.kid)).toEqual([registeredKid]);
    });

    it('accepts in the catalog package an access token signed by the KMS key, and refuses one for another API', async () => {
      const signer = new KmsSigner(deployment.kms.client(), signingKeyArn, registeredKid);
      const now = Math.floor(Date.now() / 1000);
      const token = (aud: string) =>
        signJwt(signer, { iss: apiUrl, aud, sub: 'w', iat: now, exp: now + 600, [ACTING_KEY_CLAIM]: hashApiKey(demo.keys.workspace) });
      expect((await call('/models/user?limit=1', { key: await token(apiUrl) })).status).toBe(200);
      expect((await call('/models/user?limit=1', { key: await token('https://other.example.com/api/v1') })).status).toBe(401);
    });
  });

  describe('each package, through the gateway', () => {
    it('serves the catalog from the catalog package, paged', async () => {
      const result = await call('/models/user?limit=2', { key: demo.keys.workspace });
      expect(result.status).toBe(200);
      expect(result.body.data).toHaveLength(2);
      expect(result.body.links.next).toBe('/api/v1/models/user?offset=2&limit=2');
    });

    it("answers the official SDK's endpoints.list for a variant model, whose slug the SDK percent-encodes and API Gateway passes on encoded", async () => {
      const client = new OpenRouter({
        apiKey: demo.keys.workspace,
        serverURL: apiUrl,
        httpClient: new HTTPClient({ fetcher: (input, init) => deployment.gateway.fetch(input, init) }),
        retryConfig: { strategy: 'none' },
      });
      const detail = await client.endpoints.list({ author: 'liquid', slug: 'lfm-2.5-2.6b:free' });
      expect(deployment.gateway.requests.at(-1)!.path).toBe('/api/v1/models/liquid/lfm-2.5-2.6b%3Afree/endpoints');
      expect(detail.data.id).toBe('liquid/lfm-2.5-2.6b:free');
      expect(detail.data.endpoints.length).toBeGreaterThan(0);
    });

    it('compresses a large answer as the API sets (MinimumCompressionSize), which the client decodes', async () => {
      const result = await call('/models/user?limit=20', { key: demo.keys.workspace });
      expect([result.status, result.headers.get('content-encoding')]).toEqual([200, 'gzip']);
      expect(result.body.data).toHaveLength(20);
    });

    it('authenticates and refuses the wrong key kind in the management package', async () => {
      const ok = await call('/workspaces', { key: demo.keys.managementReadOnly });
      expect(ok.status).toBe(200);
      expect(ok.body.total_count).toBe(1);
      const refused = await call('/workspaces', { key: demo.keys.workspace });
      expect(refused.status).toBe(403);
      expect(refused.body).toEqual({ error: { code: 403, message: 'Operation reserved for management keys' } });
    });

    it('runs the token exchange package: the limiter, the policy read and the OAuth refusal with the request id API Gateway gave', async () => {
      const refused = await call('/oauth/token', {
        method: 'POST',
        form: exchangeForm('eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln', '00000000-0000-4000-8000-000000000000'),
      });
      const requestId = refused.headers.get('x-amzn-requestid')!;
      expect(refused.status).toBe(400);
      expect(refused.headers.get('cache-control')).toBe('no-store');
      expect(refused.headers.get('x-request-id')).toBe(requestId);
      expect(refused.body).toEqual({
        error: 'invalid_grant',
        error_description: `The subject token or federation policy is not valid (request id ${requestId})`,
      });
    });

    it('serves the OpenAPI document from the JWKS package, equal to the one the tests check answers against, its server the URL it was fetched through', async () => {
      const result = await call('/openapi.json');
      expect(result.status).toBe(200);
      expect(result.headers.get('cache-control')).toBe('public, max-age=300');
      expect(result.body).toEqual({ ...JSON.parse(JSON.stringify(OPENAPI_DOCUMENT)), servers: [{ url: 'https://api.example.com' }] });
      // On execute-api the stage is part of the base: a client joining a path to the server reaches the route.
      const onStage = (await call(`${stageUrl}/openapi.json`)).body as { servers: { url: string }[]; paths: object };
      const stageServer = stageUrl.slice(0, -'/api/v1'.length);
      expect(onStage.servers).toEqual([{ url: stageServer }, { url: 'https://api.example.com' }]);
      expect((await call(`${onStage.servers[0]!.url}/api/v1/openapi.json`)).status).toBe(200);
      expect(((await call(`${EU_ORIGIN}/api/v1/openapi.json`)).body as { servers: unknown }).servers).toEqual([{ url: EU_ORIGIN }, { url: 'https://api.example.com' }]);
    });

    it("serves the discovery documents from the JWKS package, naming the domain's URL, the tokens' iss, as issuer and resource", async () => {
      for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
        const answer = await call(path);
        expect([path, answer.status, answer.headers.get('cache-control'), answer.body]).toEqual([path, 200, 'public, max-age=300', authorizationServerMetadata(apiUrl)]);
      }
      const resource = await call('/.well-known/oauth-protected-resource');
      expect([resource.status, resource.body]).toEqual([200, protectedResourceMetadata(apiUrl)]);
      // RFC 8414 §3 and RFC 9728 §3: the path-inserted documents at the root of the domain, which maps the stage there.
      expect((await call('https://api.example.com/.well-known/oauth-authorization-server/api/v1')).body).toEqual(authorizationServerMetadata(apiUrl));
      expect((await call('https://api.example.com/.well-known/oauth-protected-resource/api/v1')).body).toEqual(protectedResourceMetadata(apiUrl));
    });

    it('challenges a refused credential with the resource metadata URL of the API (RFC 6750 §3, RFC 9728 §5.1)', async () => {
      const refused = await call('/models/user', { key: `sk-mg-v1-${'0'.repeat(64)}` });
      expect([refused.status, refused.headers.get('www-authenticate'), refused.body]).toEqual([
        401,
        `Bearer error="invalid_token", resource_metadata="${apiUrl}/.well-known/oauth-protected-resource"`,
        { error: { code: 401, message: 'Invalid API key' } },
      ]);
    });

    it('serves the settings page and every asset it links from the settings page package, where the SettingsPageUrl output says', async () => {
      expect(deployment.outputs.SettingsPageUrl).toBe('https://api.example.com/settings/workload-identity');
      const page = await call(deployment.outputs.SettingsPageUrl!);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
      const assets = [...page.text.matchAll(/(?:src|href)="([^"]*assets\/[^"]+)"/g)].map((match) => match[1]!);
      expect(assets.length).toBeGreaterThanOrEqual(2);
      for (const asset of assets) {
        const url = new URL(asset, deployment.outputs.SettingsPageUrl);
        const answer = await call(url.href);
        expect([asset, answer.status, answer.headers.get('content-type')]).toEqual([asset, 200, expect.stringMatching(/^text\/(javascript|css); charset=utf-8$/)]);
        expect(answer.text.length).toBeGreaterThan(0);
      }
    });

    it("answers an unknown path and an unknown method with the template's gateway response, and another stage with 403", async () => {
      const unknownPath = await call('/no/such/path', { key: demo.keys.workspace });
      expect([unknownPath.status, unknownPath.body]).toEqual([404, { error: { code: 404, message: 'Not found' } }]);
      const unknownMethod = await call('/models/user', { method: 'DELETE', key: demo.keys.workspace });
      expect([unknownMethod.status, unknownMethod.body]).toEqual([404, { error: { code: 404, message: 'Not found' } }]);
      const otherStage = await call(`${deployment.gateway.origin}/prod/api/v1/models/user`);
      expect([otherStage.status, otherStage.body]).toEqual([403, { message: 'Forbidden' }]);
    });
  });

  describe("the custom domain's hostnames", () => {
    it('serve the API at their roots, as the stage URL does, each telling the function the hostname it was called on', async () => {
      for (const base of [apiUrl, `${EU_ORIGIN}/api/v1`, stageUrl]) {
        const answer = await call(`${base}/models/user?limit=1`, { key: demo.keys.workspace });
        const { host } = new URL(base);
        const { event } = deployment.gateway.requests.at(-1)!;
        const hostHeader = Object.entries(event!.headers).find(([name]) => name.toLowerCase() === 'host')?.[1];
        expect([base, answer.status, hostHeader, event!.requestContext.domainName, event!.resource]).toEqual([base, 200, host, host, '/api/v1/models/user']);
      }
    });

    it('list through the EU hostname only the models with an EU endpoint, and every model through the others (docs/reference.md#listing-rules rule 4)', async () => {
      const listed = async (base: string) =>
        ((await call(`${base}/models/user?output_modalities=all`, { key: demo.keys.workspace })).body.data as { id: string }[]).map((model) => model.id).sort();
      const catalog = snapshotCatalog();
      const inEu = catalog.filter((entry) => entry.endpoints.some((endpoint) => endpoint.regions.includes('eu'))).map((entry) => entry.model.id).sort();
      expect(inEu.length).toBeLessThan(catalog.length);
      expect(await listed(`${EU_ORIGIN}/api/v1`)).toEqual(inEu);
      for (const base of [apiUrl, stageUrl]) expect([base, (await listed(base)).length]).toEqual([base, catalog.length]);
    });

    it('route a completion through the EU hostname only to a model with an EU endpoint (docs/reference.md#listing-rules rule 4)', async () => {
      const usOnly = snapshotCatalog().find((entry) => entry.endpoints.every((endpoint) => !endpoint.regions.includes('eu')))!.model.id;
      const completion = (base: string) =>
        call(`${base}/chat/completions`, { method: 'POST', key: demo.keys.workspace, json: { model: usOnly, messages: [{ role: 'user', content: 'where' }] } });
      upstream.script('alpha', { kind: 'answer', delayMs: 0 });
      expect((await completion(apiUrl)).status).toBe(200);
      const refused = await completion(`${EU_ORIGIN}/api/v1`);
      expect([refused.status, refused.body.error.message]).toEqual([404, `No endpoints found for model ${usOnly} that your settings and guardrails allow`]);
    });
  });

  describe('browsers on other origins (CORS), and HEAD, as the template configures the gateway', () => {
    const origin = 'https://app.example.com';

    it('answers the preflight of every API resource in the gateway, for every method it serves, without a function, on the stage URL and every hostname of the custom domain', async () => {
      const resources = new Map<string, string[]>();
      for (const route of ROUTES.filter((candidate) => candidate.base !== PAGES_BASE_PATH)) {
        (resources.get(resourcePath(route)) ?? resources.set(resourcePath(route), []).get(resourcePath(route))!).push(...servedMethods([route.method]));
      }
      const stageRoot = `${deployment.gateway.origin}/${deployment.gateway.stageName}`;
      for (const root of [stageRoot, new URL(apiUrl).origin, EU_ORIGIN]) {
        for (const [resource, methods] of resources) {
          const path = resource.replace('{author}', 'openai').replace('{slug}', 'gpt-4o-mini').replace(/\{[a-z]+\}/g, '00000000-0000-4000-8000-000000000000');
          const preflight = await call(`${root}${path}`, {
            method: 'OPTIONS',
            headers: { Origin: origin, 'Access-Control-Request-Method': methods[0]!, 'Access-Control-Request-Headers': 'authorization,content-type,dpop' },
          });
          const allowed = [preflight.status, preflight.headers.get('access-control-allow-origin'), preflight.headers.get('access-control-allow-methods')?.split(',')];
          expect([root, resource, ...allowed]).toEqual([root, resource, 204, '*', methods]);
          expect(preflight.headers.get('access-control-allow-headers')?.split(',')).toEqual([...CORS_ALLOWED_HEADERS]);
          expect(preflight.headers.get('access-control-max-age')).toBe('7200');
          expect(deployment.gateway.requests.at(-1)!.functionLogicalId).toBeUndefined();
        }
        // The settings page is same-origin only: no preflight.
        expect([root, (await call(`${root}${PAGES_BASE_PATH}/workload-identity`, { method: 'OPTIONS', headers: { Origin: origin } })).status]).toEqual([root, 404]);
      }
    });

    it('names the allowed origin and what a page may read on answers, errors and the gateway\'s own answers included', async () => {
      const listed = await call('/models?limit=1', { key: demo.keys.workspace, headers: { Origin: origin } });
      const refused = await call('/models/user', { key: `sk-mg-v1-${'0'.repeat(64)}`, headers: { Origin: origin } });
      const exchange = await call('/oauth/token', { method: 'POST', form: { grant_type: 'password' }, headers: { Origin: origin } });
      // The gateway's own answer on every hostname: the custom domain's, the EU one and the stage URL.
      const unknown = await Promise.all([apiUrl, `${EU_ORIGIN}/api/v1`, stageUrl].map((base) => call(`${base}/no/such/path`, { headers: { Origin: origin } })));
      for (const answer of [listed, refused, exchange, ...unknown]) {
        expect(answer.headers.get('access-control-allow-origin')).toBe('*');
        expect(answer.headers.get('access-control-expose-headers')).toBe('X-Request-Id, X-Generation-Id, Retry-After, WWW-Authenticate, DPoP-Nonce');
      }
      expect([listed.status, refused.status, exchange.status, ...unknown.map((answer) => answer.status)]).toEqual([200, 401, 400, 404, 404, 404]);
    });

    it('answers HEAD on a GET route as the GET, without a body', async () => {
      const get = await deployment.gateway.fetch(`${apiUrl}/models/count`, { headers: { Authorization: `Bearer ${demo.keys.workspace}` } });
      const head = await deployment.gateway.fetch(`${apiUrl}/models/count`, { method: 'HEAD', headers: { Authorization: `Bearer ${demo.keys.workspace}` } });
      expect([head.status, head.headers.get('content-type'), await head.text()]).toEqual([200, 'application/json', '']);
      expect(head.headers.get('content-length')).toBe(String(Buffer.byteLength(await get.text())));
      expect(deployment.gateway.requests.at(-1)!.event?.httpMethod).toBe('HEAD');
    });

    it("lists GET /models to the openai client's models.list(), the call OpenAI-compatible tools make first", async () => {
      const openai = new OpenAI({ apiKey: demo.keys.workspace, baseURL: apiUrl, fetch: deployment.gateway.fetch, maxRetries: 0 });
      const ids: string[] = [];
      for await (const model of openai.models.list()) ids.push(model.id);
      expect(ids).toContain('openai/gpt-4o-mini');
      expect(deployment.gateway.requests.at(-1)!.resource).toBe(`${API_BASE_PATH}/models`);
    });
  });

  describe('the demo, end to end', () => {
    let issuerId: string;
    let policyId: string;
    let accessToken: string;
    let exchangeRequestId: string;

    it('creates an issuer and a policy through the management API', async () => {
      const issuer = await call('/workload-identity/issuers', {
        method: 'POST',
        key: demo.keys.managementReadWrite,
        json: { name: 'Bundle suite identity provider', issuer_url: identityProvider.issuerUrl },
      });
      expect(issuer.status).toBe(201);
      issuerId = issuer.body.data.id;
      const policy = await call('/workload-identity/policies', {
        method: 'POST',
        key: demo.keys.managementReadWrite,
        json: { name: 'Payments worker', issuer_id: issuerId, subject: SUBJECT, audience: AUDIENCE, api_key_hash: hashApiKey(demo.keys.workspace) },
      });
      expect(policy.status).toBe(201);
      policyId = policy.body.data.id;
    });

    it('exchanges a workload JWT from the HTTPS identity provider for an access token signed through KMS Sign', async () => {
      const signsBefore = deployment.kms.requests.filter((r) => r.operation === 'Sign').length;
      const exchanged = await call('/oauth/token', {
        method: 'POST',
        form: exchangeForm(identityProvider.sign({ sub: SUBJECT, aud: AUDIENCE }), policyId),
      });
      expect(exchanged.status).toBe(200);
      expect(exchanged.body).toMatchObject({ token_type: 'Bearer', issued_token_type: 'urn:ietf:params:oauth:token-type:access_token' });
      accessToken = exchanged.body.access_token;
      exchangeRequestId = exchanged.headers.get('x-amzn-requestid')!;
      // The issuer's keys, fetched over HTTPS by the token exchange process.
      expect(identityProvider.requests).toEqual(expect.arrayContaining(['/.well-known/openid-configuration', '/.well-known/jwks.json']));
      const signs = deployment.kms.requests.filter((r) => r.operation === 'Sign');
      expect(signs.length).toBe(signsBefore + 1);
      expect(signs.at(-1)!.body).toMatchObject({ KeyId: signingKeyArn, MessageType: 'DIGEST', SigningAlgorithm: 'ECDSA_SHA_256' });
    });

    it('verifies the access token with jose against the JWKS the gateway serves', async () => {
      const jwks = createRemoteJWKSet(new URL(`${apiUrl}/oauth/jwks`), { [customFetch]: deployment.gateway.fetch });
      const { payload } = await jwtVerify(accessToken, jwks, { issuer: apiUrl, audience: apiUrl, typ: 'at+jwt', algorithms: ['ES256'] });
      expect(decodeProtectedHeader(accessToken).kid).toBe(registeredKid);
      expect(payload).toMatchObject({ sub: SUBJECT, federation_policy_id: policyId, federation_issuer_id: issuerId });
    });

    it('lists the catalog with the access token as bearer', async () => {
      const catalog = await call('/models/user?limit=3', { key: accessToken });
      expect(catalog.status).toBe(200);
      expect(catalog.body.data).toHaveLength(3);
    });

    it('streams a completion to the openai client from the HTTPS upstream, with the provider key read from Secrets Manager', async () => {
      upstream.script('alpha', { kind: 'answer', delayMs: 150 });
      const client = new OpenAI({ apiKey: accessToken, baseURL: apiUrl, maxRetries: 0, fetch: deployment.gateway.fetch });
      const stream = await client.chat.completions.create({
        model: 'openai/gpt-4o-mini',
        messages: [{ role: 'user', content: 'streamed through the bundle' }],
        stream: true,
      });
      const arrivals: { at: number; content: string }[] = [];
      for await (const chunk of stream) {
        const content = chunk.choices[0]?.delta.content;
        if (content) arrivals.push({ at: Date.now(), content });
      }
      expect(arrivals.map((arrival) => arrival.content).join('')).toBe('streamed through the bundle');
      // Relayed as produced: the words arrive as the upstream sends them, 150 ms apart.
      expect(arrivals.at(-1)!.at - arrivals[0]!.at).toBeGreaterThanOrEqual(250);

      const received = upstream.received.at(-1)!;
      expect(received.headers.authorization).toBe(`Bearer ${PROVIDER_KEY}`);
      expect(deployment.secrets.requests.map((r) => [r.action, r.accessKeyId, r.resource])).toContainEqual([
        'secretsmanager:GetSecretValue',
        'Inference',
        deployment.outputs.ProviderCredentialsSecretArn,
      ]);

      // The Lambda runtime's streaming helpers: the prelude, then one write per event.
      const record = deployment.gateway.requests.findLast((r) => r.resource === '/api/v1/chat/completions')!;
      expect(record.streamed).toMatchObject({
        contentType: 'application/vnd.awslambda.http-integration-response',
        prelude: { statusCode: 200, headers: { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache', Connection: 'keep-alive' } },
      });
      expect(record.streamed!.writes).toBeGreaterThanOrEqual(arrivals.length + 1);
    });

    it("shows the acting key's usage at GET /key", async () => {
      // The completions above were recorded before they were answered.
      const answer = await call('/key', { key: accessToken });
      expect(answer.status).toBe(200);
      expect(answer.body.data.usage).toBeGreaterThan(0);
      expect(answer.body.data).toMatchObject({ organization_id: demo.organizationId, workspace_id: demo.workspaceId, is_management_key: false });
    });

    it('runs the usage rollup from its package when its hourly schedule fires, reading the organizations and folding nothing not yet closed', async () => {
      const [schedule] = Object.values(deployment.schedules);
      expect(schedule!.expression).toBe('rate(1 hour)');
      const [outcome] = await schedule!.fire();
      expect(outcome!.ok).toBe(true);
      // Today's completions are not closed yet: nothing is folded, every organization read.
      expect(JSON.parse((outcome as { payload: string }).payload)).toMatchObject({ organizations: expect.any(Number), days: 0 });
      expect(JSON.parse((outcome as { payload: string }).payload).organizations).toBeGreaterThan(0);
    });

    it('records the exchange event, with the client address and request id API Gateway gave', async () => {
      const events = await call(`/workload-identity/events?policy_id=${policyId}&limit=1`, { key: demo.keys.managementReadOnly });
      expect(events.status).toBe(200);
      expect(events.body.data[0]).toMatchObject({ outcome: 'issued', subject: SUBJECT, source_ip: '127.0.0.1', request_id: exchangeRequestId });
    });

    it.each(['oauth2', 'oidc'] as const)(
      "exchanges again through openid-client, configured by discovery() (%s: RFC 8414's path-inserted document at the domain's root, or OpenID discovery) from the domain's URL alone",
      async (algorithm) => {
        const fetched: string[] = [];
        const config = await oauthClient.discovery(new URL(apiUrl), policyId, undefined, oauthClient.None(), {
          algorithm,
          [oauthClient.customFetch]: (url, options) => (fetched.push(url), deployment.gateway.fetch(url, options as RequestInit)),
        });
        expect(fetched[0]).toBe(
          algorithm === 'oauth2' ? 'https://api.example.com/.well-known/oauth-authorization-server/api/v1' : `${apiUrl}/.well-known/openid-configuration`,
        );
        const tokens = await oauthClient.genericGrantRequest(config, 'urn:ietf:params:oauth:grant-type:token-exchange', {
          subject_token: identityProvider.sign({ sub: SUBJECT, aud: AUDIENCE }),
          subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
          federation_policy_id: policyId,
        });
        expect(tokens).toMatchObject({ token_type: 'bearer', scope: 'inference' });
        const jwks = createRemoteJWKSet(new URL(config.serverMetadata().jwks_uri!), { [customFetch]: deployment.gateway.fetch });
        expect((await jwtVerify(tokens.access_token, jwks, { issuer: config.serverMetadata().issuer, audience: apiUrl })).payload.sub).toBe(SUBJECT);
      },
    );
  });

  describe('DPoP-bound tokens through the packages (RFC 9449)', () => {
    it('binds a token to a proof made for the token endpoint, takes it with a proof per request on every hostname, through the openai client too, and refuses it as a bearer token or with a proof for another hostname', async () => {
      const policy = await call('/workload-identity/policies', {
        method: 'POST',
        key: demo.keys.managementReadWrite,
        json: {
          name: 'Bound worker',
          issuer_id: (await call('/workload-identity/issuers', { key: demo.keys.managementReadOnly })).body.data[0].id,
          subject: SUBJECT,
          audience: AUDIENCE,
          api_key_hash: hashApiKey(demo.keys.workspace),
          require_dpop: true,
        },
      });
      expect([policy.status, policy.body.data.require_dpop]).toEqual([201, true]);
      const form = {
        grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
        subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
        federation_policy_id: policy.body.data.id,
      };
      const refused = await call('/oauth/token', { method: 'POST', form: { ...form, subject_token: identityProvider.sign({ sub: SUBJECT, aud: AUDIENCE }) } });
      expect([refused.status, refused.body.error]).toEqual([400, 'invalid_dpop_proof']);

      const key = await newDpopKey();
      const bound = await call('/oauth/token', {
        method: 'POST',
        headers: { DPoP: await dpopProof(key, 'POST', `${apiUrl}/oauth/token`) },
        form: { ...form, subject_token: identityProvider.sign({ sub: SUBJECT, aud: AUDIENCE }) },
      });
      expect([bound.status, bound.body.token_type, decodeJwt(bound.body.access_token).cnf]).toEqual([200, 'DPoP', { jkt: key.jkt }]);
      const token = bound.body.access_token as string;

      upstream.script('alpha', { kind: 'answer', delayMs: 0 });
      const client = new OpenAI({ apiKey: 'unused', baseURL: apiUrl, maxRetries: 0, fetch: dpopFetch(token, key, deployment.gateway.fetch) });
      const completion = await client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'bound' }] });
      expect(completion.choices[0]!.message.role).toBe('assistant');
      // A proof names the URL of the request, on whichever hostname the gateway serves it (RFC 9449 §4.3).
      for (const base of [apiUrl, `${EU_ORIGIN}/api/v1`, stageUrl]) {
        const catalog = await dpopFetch(token, key, deployment.gateway.fetch)(`${base}/models/user?limit=1`);
        expect([base, catalog.status]).toEqual([base, 200]);
      }
      const elsewhere = await call('/models/user?limit=1', {
        headers: { Authorization: `DPoP ${token}`, DPoP: await dpopProof(key, 'GET', `${EU_ORIGIN}/api/v1/models/user`, token) },
      });
      expect([elsewhere.status, elsewhere.headers.get('www-authenticate')]).toEqual([401, expect.stringMatching(/^DPoP error="invalid_dpop_proof"/)]);
      const stolen = await call('/models/user?limit=1', { key: token });
      expect([stolen.status, stolen.headers.get('www-authenticate')]).toEqual([401, expect.stringMatching(/^DPoP error="invalid_token"/)]);
    });
  });

  describe('DPoP through a regional hostname (RFC 9449 htu)', () => {
    it('binds a token to a proof made for the token endpoint on the regional hostname called, and refuses one for a hostname the stage does not serve', async () => {
      const issuerId = (await call('/workload-identity/issuers', { key: demo.keys.managementReadOnly })).body.data[0].id;
      const policy = await call('/workload-identity/policies', {
        method: 'POST',
        key: demo.keys.managementReadWrite,
        json: { name: 'Regional worker', issuer_id: issuerId, subject: SUBJECT, audience: AUDIENCE, api_key_hash: hashApiKey(demo.keys.workspace), require_dpop: true },
      });
      const key = await newDpopKey();
      const exchange = async (htu: string) =>
        call(`${EU_ORIGIN}/api/v1/oauth/token`, {
          method: 'POST',
          headers: { DPoP: await dpopProof(key, 'POST', htu) },
          form: exchangeForm(identityProvider.sign({ sub: SUBJECT, aud: AUDIENCE }), policy.body.data.id),
        });
      const bound = await exchange(`${EU_ORIGIN}/api/v1/oauth/token`);
      expect([bound.status, bound.body.token_type, decodeJwt(bound.body.access_token).cnf]).toEqual([200, 'DPoP', { jkt: key.jkt }]);
      const elsewhere = await exchange('https://eu.evil.example/api/v1/oauth/token');
      expect([elsewhere.status, elsewhere.body.error]).toEqual([400, 'invalid_dpop_proof']);
    });
  });

  describe('packages, as Lambda loads them', () => {
    it('keeps the SDK out of every package and the accounts service and CEL engine out of the JWKS package', () => {
      const sourcesOf = (constructId: string) => {
        const { codeDir } = deployment.functions[constructId]!.spec;
        const map = JSON.parse(readFileSync(join(codeDir, 'index.mjs.map'), 'utf8')) as { sources: string[] };
        return map.sources.map((source) => relative(ROOT, resolve(codeDir, source)));
      };
      for (const id of CONSTRUCT_IDS) expect([id, sourcesOf(id).filter((source) => source.includes('@aws-sdk/'))]).toEqual([id, []]);
      const jwks = sourcesOf('Jwks');
      expect(jwks).toContain('lambdas/functions/jwks/handler.ts');
      expect(jwks.filter((source) => /accounts-service|catalog-index|management-api/.test(source))).toEqual([]);
      // The OpenAPI document imports bounds, not the modules that enforce them with the CEL engine.
      expect(jwks.filter((source) => /cel-js|federation\/condition|federation-validation/.test(source))).toEqual([]);
    });

    it('fails the cold start of a package, naming the variable, when the template leaves out one it reads', async () => {
      await expect(startLambdaProcess(deployment.specOf('Catalog', { without: ['MODELS_TABLE'] }))).rejects.toThrow(/MODELS_TABLE is not set/);
      await expect(startLambdaProcess(deployment.specOf('TokenExchange', { without: ['API_BASE_URL'] }))).rejects.toThrow(/API_BASE_URL is not set/);
    });

    it('traces the catalog package to the X-Ray daemon when it runs in Lambda, and loads no X-Ray SDK outside Lambda', async () => {
      // The stack's environment, outside Lambda: the deployed catalog has served requests untraced.
      expect(deployment.functions.Catalog!.spec.environment).toMatchObject(TRACING_ENVIRONMENT);
      expect(await deployment.functions.Catalog!.probe()).toEqual({ namespaces: [] });

      // The X-Ray daemon's side of its UDP protocol: a JSON header line, then one segment document.
      const daemon = createSocket('udp4');
      const documents: { name: string; trace_id: string }[] = [];
      let segmentsArrived!: () => void;
      const handlerAndDynamoDb = new Promise<void>((resolve) => (segmentsArrived = resolve));
      daemon.on('message', (message) => {
        const [header, document] = message.toString().split('\n');
        if (JSON.parse(header!).format === 'json') documents.push(JSON.parse(document!));
        const names = documents.map((d) => d.name);
        if (names.includes('## index.handler') && names.includes('DynamoDB')) segmentsArrived();
      });
      await new Promise<void>((ready) => daemon.bind(0, '127.0.0.1', ready));
      let traced: LambdaProcess | undefined;
      try {
        // The same package with the variables the Lambda runtime adds for an invocation with active tracing.
        const root = '1-6740f1a2-5b3c4d5e6f708192a3b4c5d6';
        traced = await startLambdaProcess(
          deployment.specOf('Catalog', {
            extra: {
              AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x',
              _X_AMZN_TRACE_ID: `Root=${root};Parent=53995c3f42cd8ad8;Sampled=1`,
              AWS_XRAY_DAEMON_ADDRESS: `127.0.0.1:${(daemon.address() as { port: number }).port}`,
              AWS_XRAY_CONTEXT_MISSING: 'LOG_ERROR',
            },
          }),
        );
        const event = deployment.gateway.requests.find((r) => r.resource === '/api/v1/models/user' && r.status === 200)!.event;
        const result = await traced.invoke(event);
        expect(result.ok && JSON.parse(result.payload).statusCode).toBe(200);
        expect(await traced.probe()).toEqual({ namespaces: ['AWSXRay'] });
        // Segments go out over UDP as the invocation ends: wait for both to arrive.
        await handlerAndDynamoDb;
        expect(new Set(documents.map((d) => d.trace_id))).toEqual(new Set([root]));
      } finally {
        await traced?.stop();
        daemon.close();
      }
    });

    it('stays within the memory the template gives each function', () => {
      const used = Object.fromEntries(Object.entries(deployment.functions).map(([id, fn]) => [id, `${fn.maxMemoryUsedMb}/${fn.spec.memorySize} MB`]));
      for (const [id, fn] of Object.entries(deployment.functions)) {
        expect([id, fn.maxMemoryUsedMb < fn.spec.memorySize, used[id]]).toEqual([id, true, used[id]]);
      }
      // One environment each: no invocation timed out or crashed its process.
      expect(Object.values(deployment.functions).map((fn) => fn.coldStarts)).toEqual(CONSTRUCT_IDS.map(() => 1));
    });
  });

  describe('rotation', () => {
    it('registers the replacement of the stack\'s key through the registrar on a CloudFormation Update; JWKS publishes it first, the old key after', async () => {
      const [logicalId, resource] = Object.entries(deployment.assembly.template.Resources).find(([, r]) => r.Type === 'Custom::SigningKeyRegistration')!;
      const oldProperties = deployment.resolver.resolve(resource.Properties) as Record<string, string>;
      // CloudFormation replaces the key (a property that cannot change in place changed): the
      // template's references to it, and the registrar's grant on it, name the new key.
      const [keyId, key] = Object.entries(deployment.assembly.template.Resources).find(([, r]) => r.Type === 'AWS::KMS::Key')!;
      const replacement = await deployment.kms.client().send(
        new CreateKeyCommand({
          KeySpec: key.Properties!.KeySpec,
          KeyUsage: key.Properties!.KeyUsage,
          Policy: JSON.stringify(deployment.resolver.resolve(key.Properties!.KeyPolicy)),
          Tags: key.Properties!.Tags.map((tag: { Key: string; Value: string }) => ({ TagKey: tag.Key, TagValue: tag.Value })),
        }),
      );
      deployment.replaced(keyId, { ref: replacement.KeyMetadata!.KeyId!, attributes: { Arn: replacement.KeyMetadata!.Arn!, KeyId: replacement.KeyMetadata!.KeyId! } });
      const properties = deployment.resolver.resolve(resource.Properties) as Record<string, string>;
      expect(properties[SIGNING_KEY_REGISTRATION_PROPERTIES.signingKeyArn]).toBe(replacement.KeyMetadata!.Arn);
      const updated = await deployment.functions.SigningKeyRegistrar!.invoke(
        cloudFormationEvent('Update', logicalId, resource.Type, properties, deployment.resolver, {
          PhysicalResourceId: registeredKid,
          OldResourceProperties: oldProperties,
        }),
      );
      expect(updated.ok).toBe(true);
      const newKid = JSON.parse((updated as { payload: string }).payload).PhysicalResourceId as string;
      expect(newKid).not.toBe(registeredKid);
      // A JWKS container that served the key set within its cache time serves it until then.
      await eventually(async () => {
        const jwks = await call('/oauth/jwks');
        expect(jwks.body.keys.map((k: { kid: string }) => k.kid)).toEqual([newKid, registeredKid]);
      }, (PUBLISHED_KEYS_CACHE_SECONDS + 2) * 1000);
    }, 30_000);
  });

  describe('IAM', () => {
    it("makes no AWS request its role's policies deny: every call of every package passed the IAM gate", () => {
      expect(iam.errors).toEqual([]);
      expect(iam.denials).toEqual([]);
      const seen = iam.seenActions();
      expect(seen.TokenExchange?.['kms:Sign']?.resources).toEqual([signingKeyArn.replace(/:[a-z0-9-]+:\d{12}:/, ':us-east-1:123456789012:')]);
      expect(Object.keys(seen.SigningKeyRegistrar ?? {})).toEqual(expect.arrayContaining(['kms:GetPublicKey', 'dynamodb:PutItem']));
      expect(seen.Inference?.['secretsmanager:GetSecretValue']?.allowed).toBeGreaterThan(0);
      expect(Object.keys(seen).sort()).toEqual(CONSTRUCT_IDS.filter((id) => id !== 'SettingsPage'));
    });
  });

  /**
   * The construct as a user's own CDK app holds it, `new Modelgate(stack, 'Gateway', { instance:
   * 'Embedded', exchangeRateLimit: 30, corsAllowedOrigins: [two origins], publicCatalog: true })`
   * in their stack `Platform`, deployed the same way from its own cloud assembly, behind its own
   * IAM gate.
   */
  describe('an instance in a stack of its user, served from its packages', () => {
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
      const caFile = join(outdir, 'outbound-ca.pem');
      const assembly = synthesizeEmbeddedModelgate(join(outdir, 'embedded.out'), {
        instance: 'Embedded',
        exchangeRateLimit: 30,
        corsAllowedOrigins: pageOrigins,
        publicCatalog: true,
      });
      embeddedIam = new IamGate({ stackName: assembly.stackName, template: assembly.template });
      embedded = await deployLocally(assembly, {
        iam: embeddedIam,
        // Test-only, as for the stack above: the identity provider is on this machine, with a private CA.
        extraEnvironment: {
          TokenExchange: { MODELGATE_ALLOW_LOOPBACK_ISSUERS: '1', STAGE: 'local', NODE_EXTRA_CA_CERTS: caFile },
          Management: { MODELGATE_ALLOW_LOOPBACK_ISSUERS: '1', STAGE: 'local' },
        },
      });
      embeddedStores = connectToRuntime({ dynamoEndpoint: embedded.dynamo.endpoint });
      await seedCatalog(embeddedStores.catalog);
      const accounts = new DynamoAccountStore(embeddedStores.documentClient, TABLE_SCHEMAS.keys.localName);
      embeddedDemo = await ensureDemoOrganization(new AccountsService({ store: accounts }), accounts, join(outdir, 'embedded-demo.json'), 'https://unused', () => undefined);
    }, 180_000);

    afterAll(async () => {
      embeddedStores?.destroy();
      await embedded?.stop();
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
        json: { name: 'Embedded suite identity provider', issuer_url: identityProvider.issuerUrl },
      });
      const policy = await embeddedCall('/workload-identity/policies', {
        method: 'POST',
        key: embeddedDemo.keys.managementReadWrite,
        json: { name: 'Embedded worker', issuer_id: issuer.body.data.id, subject: SUBJECT, audience: AUDIENCE, api_key_hash: hashApiKey(embeddedDemo.keys.workspace) },
      });
      const exchanged = await embeddedCall('/oauth/token', {
        method: 'POST',
        form: exchangeForm(identityProvider.sign({ sub: SUBJECT, aud: AUDIENCE }), policy.body.data.id),
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
});
