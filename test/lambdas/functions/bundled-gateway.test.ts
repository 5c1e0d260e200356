import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { HTTPClient, OpenRouter } from '@openrouter/sdk';
import OpenAI from 'openai';
import { hashApiKey } from '../../../lambdas/accounts/api-keys';
import { ACTING_KEY_CLAIM } from '../../../lambdas/credentials/access-token-verifier';
import { authorizationServerMetadata, protectedResourceMetadata } from '../../../lambdas/oauth/discovery';
import { OPENAPI_DOCUMENT } from '../../../lambdas/document/document';
import { CORS_ALLOWED_HEADERS } from '../../../lambdas/http/cors';
import { API_BASE_PATH, PAGES_BASE_PATH, ROUTES, resourcePath, servedMethods } from '../../../lambdas/routes';
import { KmsSigner } from '../../../lambdas/aws/kms-signer';
import { snapshotCatalog } from '../../../local/seed';
import { exchangeForm } from '../../../local/exchange-form';
import { signJwt } from '../../support/access-tokens';
import { CONSTRUCT_IDS, EU_ORIGIN, useBundledStack } from '../../support/bundled-stack';
import { FUNCTION_REQUIREMENTS } from '../../support/function-requirements';

describe('the synthesized stack, served from its function packages', () => {
  const stack = useBundledStack();
  const { call } = stack;

  describe('wiring, from the template', () => {
    it('runs every function of the stack in its own process, from its package, with the handler, timeout and memory the template gives', () => {
      expect(Object.keys(stack.deployment.functions).sort()).toEqual(CONSTRUCT_IDS);
      for (const fn of stack.deployment.assembly.functions.filter((candidate) => CONSTRUCT_IDS.includes(candidate.constructId))) {
        const running = stack.deployment.functions[fn.constructId]!;
        expect([fn.constructId, fn.properties.Handler, existsSync(join(fn.codeDir, 'index.mjs'))]).toEqual([fn.constructId, 'index.handler', true]);
        expect(running.spec).toMatchObject({ codeDir: fn.codeDir, timeoutSeconds: fn.properties.Timeout, memorySize: fn.properties.MemorySize });
      }
      expect(stack.deployment.functions.Inference!.streaming).toBe(true);
      expect(Object.entries(stack.deployment.functions).filter(([, fn]) => fn.streaming).map(([id]) => id)).toEqual(['Inference']);
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
      for (const fn of stack.deployment.assembly.functions.filter((candidate) => CONSTRUCT_IDS.includes(candidate.constructId))) {
        const declared = stack.deployment.resolver.resolve(fn.properties.Environment.Variables) as Record<string, string>;
        const environment = stack.deployment.functions[fn.constructId]!.spec.environment;
        expect(Object.keys(environment).sort()).toEqual([...new Set([...Object.keys(declared), ...runtimeVariables, ...(testOnly[fn.constructId] ?? [])])].sort());
        const { STAGE, ...rest } = declared;
        expect(environment).toMatchObject(rest);
        expect(environment.STAGE).toBe(testOnly[fn.constructId]?.includes('MODELGATE_ALLOW_LOOPBACK_ISSUERS') ? 'local' : STAGE);
        expect(environment).toMatchObject({ NODE_OPTIONS: '--enable-source-maps', AWS_ACCESS_KEY_ID: fn.constructId, AWS_SECRET_ACCESS_KEY: 'local' });
      }
    });

    it("names the custom domain's URL as the API base URL of every function that issues, verifies or describes access tokens", () => {
      expect(stack.apiUrl).toBe('https://api.example.com/api/v1');
      expect(stack.stageUrl).toMatch(/^https:\/\/[a-z0-9]{10}\.execute-api\.us-east-1\.amazonaws\.com\/v1\/api\/v1$/);
      for (const id of ['Catalog', 'TokenExchange', 'Management', 'Inference', 'Jwks']) {
        expect([id, stack.deployment.functions[id]!.spec.environment.API_BASE_URL]).toEqual([id, stack.apiUrl]);
      }
    });

    it("serves the custom domain's hostnames from the template's domain names, each mapping the stage at its root", () => {
      expect([...stack.deployment.gateway.customDomains].sort()).toEqual(['api.example.com', 'eu.api.example.com']);
    });

    it('routes each method of the template to the function its integration names, the one the route table means', () => {
      const constructOf = (logicalId: string) => stack.deployment.assembly.functions.find((fn) => fn.logicalId === logicalId)!.constructId;
      const served = stack.deployment.gateway.routes;
      // HEAD beside each GET, served by the GET route's function (RFC 9110 §9.3.2); an ANY method
      // serves every method of a resource whose routes one function serves.
      const meant = ROUTES.flatMap((route) =>
        servedMethods([route.method]).map((method) => `${method} ${resourcePath(route)} -> ${FUNCTION_REQUIREMENTS[route.function].construct}${route.function === 'inference' ? ' (stream)' : ''}`),
      );
      const servedAs = meant.map((line) => {
        const [method, path] = line.split(' ') as [string, string];
        const route = served.find((candidate) => candidate.resourcePath === path && candidate.method === method) ?? served.find((candidate) => candidate.resourcePath === path && candidate.method === 'ANY');
        return route ? `${method} ${path} -> ${constructOf(route.functionLogicalId)}${route.streaming ? ' (stream)' : ''}` : `${method} ${path} -> nothing`;
      });
      expect(servedAs).toEqual(meant);
      // And no method of the template reaches a function that serves no route of its resource.
      const functionsOf = (path: string) => new Set(ROUTES.filter((route) => resourcePath(route) === path).map((route) => FUNCTION_REQUIREMENTS[route.function].construct));
      expect(served.filter((route) => !functionsOf(route.resourcePath).has(constructOf(route.functionLogicalId)))).toEqual([]);
      expect(served.some((route) => route.method === 'ANY')).toBe(true);
    });
  });

  describe('the signing key', () => {
    it('is registered from the registrar package as CloudFormation invokes it on the first deploy, reading the public key from KMS', async () => {
      const [created] = Object.values(stack.deployment.customResources);
      expect(created!.PhysicalResourceId).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(created!.Data).toEqual({ Kid: created!.PhysicalResourceId });
      // The stack's key, created from its template definition, then read by the registrar.
      expect(stack.deployment.kms.requests.slice(0, 2).map((r) => [r.operation, r.body.KeyId ?? null])).toEqual([
        ['CreateKey', null],
        ['GetPublicKey', stack.signingKeyArn],
      ]);
      const jwks = await call('/oauth/jwks');
      expect(jwks.status).toBe(200);
      expect(jwks.body.keys.map((key: { kid: string }) => key.kid)).toEqual([stack.registeredKid]);
    });

    it('accepts in the catalog package an access token signed by the KMS key, and refuses one for another API', async () => {
      const signer = new KmsSigner(stack.deployment.kms.client(), stack.signingKeyArn, stack.registeredKid);
      const now = Math.floor(Date.now() / 1000);
      const token = (aud: string) =>
        signJwt(signer, { iss: stack.apiUrl, aud, sub: 'w', iat: now, exp: now + 600, [ACTING_KEY_CLAIM]: hashApiKey(stack.demo.keys.workspace) });
      expect((await call('/models/user?limit=1', { key: await token(stack.apiUrl) })).status).toBe(200);
      expect((await call('/models/user?limit=1', { key: await token('https://other.example.com/api/v1') })).status).toBe(401);
    });
  });

  describe('each package, through the gateway', () => {
    it('serves the catalog from the catalog package, paged', async () => {
      const result = await call('/models/user?limit=2', { key: stack.demo.keys.workspace });
      expect(result.status).toBe(200);
      expect(result.body.data).toHaveLength(2);
      expect(result.body.links.next).toBe('/api/v1/models/user?offset=2&limit=2');
    });

    it("answers the official SDK's endpoints.list for a variant model, whose slug the SDK percent-encodes and API Gateway passes on encoded", async () => {
      const client = new OpenRouter({
        apiKey: stack.demo.keys.workspace,
        serverURL: stack.apiUrl,
        httpClient: new HTTPClient({ fetcher: (input, init) => stack.deployment.gateway.fetch(input, init) }),
        retryConfig: { strategy: 'none' },
      });
      const detail = await client.endpoints.list({ author: 'liquid', slug: 'lfm-2.5-2.6b:free' });
      expect(stack.deployment.gateway.requests.at(-1)!.path).toBe('/api/v1/models/liquid/lfm-2.5-2.6b%3Afree/endpoints');
      expect(detail.data.id).toBe('liquid/lfm-2.5-2.6b:free');
      expect(detail.data.endpoints.length).toBeGreaterThan(0);
    });

    it('compresses a large answer as the API sets (MinimumCompressionSize), which the client decodes', async () => {
      const result = await call('/models/user?limit=20', { key: stack.demo.keys.workspace });
      expect([result.status, result.headers.get('content-encoding')]).toEqual([200, 'gzip']);
      expect(result.body.data).toHaveLength(20);
    });

    it('authenticates and refuses the wrong key kind in the management package', async () => {
      const ok = await call('/workspaces', { key: stack.demo.keys.managementReadOnly });
      expect(ok.status).toBe(200);
      expect(ok.body.total_count).toBe(1);
      const refused = await call('/workspaces', { key: stack.demo.keys.workspace });
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
      const onStage = (await call(`${stack.stageUrl}/openapi.json`)).body as { servers: { url: string }[]; paths: object };
      const stageServer = stack.stageUrl.slice(0, -'/api/v1'.length);
      expect(onStage.servers).toEqual([{ url: stageServer }, { url: 'https://api.example.com' }]);
      expect((await call(`${onStage.servers[0]!.url}/api/v1/openapi.json`)).status).toBe(200);
      expect(((await call(`${EU_ORIGIN}/api/v1/openapi.json`)).body as { servers: unknown }).servers).toEqual([{ url: EU_ORIGIN }, { url: 'https://api.example.com' }]);
    });

    it("serves the discovery documents from the JWKS package, naming the domain's URL, the tokens' iss, as issuer and resource", async () => {
      for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
        const answer = await call(path);
        expect([path, answer.status, answer.headers.get('cache-control'), answer.body]).toEqual([path, 200, 'public, max-age=300', authorizationServerMetadata(stack.apiUrl)]);
      }
      const resource = await call('/.well-known/oauth-protected-resource');
      expect([resource.status, resource.body]).toEqual([200, protectedResourceMetadata(stack.apiUrl)]);
      // RFC 8414 §3 and RFC 9728 §3: the path-inserted documents at the root of the domain, which maps the stage there.
      expect((await call('https://api.example.com/.well-known/oauth-authorization-server/api/v1')).body).toEqual(authorizationServerMetadata(stack.apiUrl));
      expect((await call('https://api.example.com/.well-known/oauth-protected-resource/api/v1')).body).toEqual(protectedResourceMetadata(stack.apiUrl));
    });

    it('challenges a refused credential with the resource metadata URL of the API (RFC 6750 §3, RFC 9728 §5.1)', async () => {
      const refused = await call('/models/user', { key: `sk-mg-v1-${'0'.repeat(64)}` });
      expect([refused.status, refused.headers.get('www-authenticate'), refused.body]).toEqual([
        401,
        `Bearer error="invalid_token", resource_metadata="${stack.apiUrl}/.well-known/oauth-protected-resource"`,
        { error: { code: 401, message: 'Invalid API key' } },
      ]);
    });

    it('serves the settings page and every asset it links from the settings page package, where the SettingsPageUrl output says', async () => {
      expect(stack.deployment.outputs.SettingsPageUrl).toBe('https://api.example.com/settings/workload-identity');
      const page = await call(stack.deployment.outputs.SettingsPageUrl!);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
      const assets = [...page.text.matchAll(/(?:src|href)="([^"]*assets\/[^"]+)"/g)].map((match) => match[1]!);
      expect(assets.length).toBeGreaterThanOrEqual(2);
      for (const asset of assets) {
        const url = new URL(asset, stack.deployment.outputs.SettingsPageUrl);
        const answer = await call(url.href);
        expect([asset, answer.status, answer.headers.get('content-type')]).toEqual([asset, 200, expect.stringMatching(/^text\/(javascript|css); charset=utf-8$/)]);
        expect(answer.text.length).toBeGreaterThan(0);
      }
    });

    it("answers an unknown path with the template's gateway response, an unknown method with its function's 404, and another stage with 403", async () => {
      const unknownPath = await call('/no/such/path', { key: stack.demo.keys.workspace });
      expect([unknownPath.status, unknownPath.body]).toEqual([404, { error: { code: 404, message: 'Not found' } }]);
      // The resource's ANY method takes it to the catalog function, whose dispatcher has no such route.
      const unknownMethod = await call('/models/user', { method: 'DELETE', key: stack.demo.keys.workspace });
      expect([unknownMethod.status, unknownMethod.body]).toEqual([404, { error: { code: 404, message: 'Resource not found' } }]);
      const otherStage = await call(`${stack.deployment.gateway.origin}/prod/api/v1/models/user`);
      expect([otherStage.status, otherStage.body]).toEqual([403, { message: 'Forbidden' }]);
    });
  });

  describe("the custom domain's hostnames", () => {
    it('serve the API at their roots, as the stage URL does, each telling the function the hostname it was called on', async () => {
      for (const base of [stack.apiUrl, `${EU_ORIGIN}/api/v1`, stack.stageUrl]) {
        const answer = await call(`${base}/models/user?limit=1`, { key: stack.demo.keys.workspace });
        const { host } = new URL(base);
        const { event } = stack.deployment.gateway.requests.at(-1)!;
        const hostHeader = Object.entries(event!.headers).find(([name]) => name.toLowerCase() === 'host')?.[1];
        expect([base, answer.status, hostHeader, event!.requestContext.domainName, event!.resource]).toEqual([base, 200, host, host, '/api/v1/models/user']);
      }
    });

    it('list through the EU hostname only the models with an EU endpoint, and every model through the others (docs/reference.md#listing-rules rule 4)', async () => {
      const listed = async (base: string) =>
        ((await call(`${base}/models/user?output_modalities=all`, { key: stack.demo.keys.workspace })).body.data as { id: string }[]).map((model) => model.id).sort();
      const catalog = snapshotCatalog();
      const inEu = catalog.filter((entry) => entry.endpoints.some((endpoint) => endpoint.regions.includes('eu'))).map((entry) => entry.model.id).sort();
      expect(inEu.length).toBeLessThan(catalog.length);
      expect(await listed(`${EU_ORIGIN}/api/v1`)).toEqual(inEu);
      for (const base of [stack.apiUrl, stack.stageUrl]) expect([base, (await listed(base)).length]).toEqual([base, catalog.length]);
    });

    it('route a completion through the EU hostname only to a model with an EU endpoint (docs/reference.md#listing-rules rule 4)', async () => {
      const usOnly = snapshotCatalog().find((entry) => entry.endpoints.every((endpoint) => !endpoint.regions.includes('eu')))!.model.id;
      const completion = (base: string) =>
        call(`${base}/chat/completions`, { method: 'POST', key: stack.demo.keys.workspace, json: { model: usOnly, messages: [{ role: 'user', content: 'where' }] } });
      stack.upstream.script('alpha', { kind: 'answer', delayMs: 0 });
      expect((await completion(stack.apiUrl)).status).toBe(200);
      const refused = await completion(`${EU_ORIGIN}/api/v1`);
      expect([refused.status, refused.body.error.message]).toEqual([404, `No endpoints found for model ${usOnly} that your settings, guardrails and routing preferences allow`]);
    });
  });

  describe('browsers on other origins (CORS), and HEAD, as the template configures the gateway', () => {
    const origin = 'https://app.example.com';

    it('answers the preflight of every API resource in the gateway, for every method it serves, without a function, on the stage URL and every hostname of the custom domain', async () => {
      const resources = new Map<string, string[]>();
      for (const route of ROUTES.filter((candidate) => candidate.base !== PAGES_BASE_PATH)) {
        (resources.get(resourcePath(route)) ?? resources.set(resourcePath(route), []).get(resourcePath(route))!).push(...servedMethods([route.method]));
      }
      const stageRoot = `${stack.deployment.gateway.origin}/${stack.deployment.gateway.stageName}`;
      for (const root of [stageRoot, new URL(stack.apiUrl).origin, EU_ORIGIN]) {
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
          expect(stack.deployment.gateway.requests.at(-1)!.functionLogicalId).toBeUndefined();
        }
        // The settings page is same-origin only: no preflight.
        expect([root, (await call(`${root}${PAGES_BASE_PATH}/workload-identity`, { method: 'OPTIONS', headers: { Origin: origin } })).status]).toEqual([root, 404]);
      }
    });

    it('names the allowed origin and what a page may read on answers, errors and the gateway\'s own answers included', async () => {
      const listed = await call('/models?limit=1', { key: stack.demo.keys.workspace, headers: { Origin: origin } });
      const refused = await call('/models/user', { key: `sk-mg-v1-${'0'.repeat(64)}`, headers: { Origin: origin } });
      const exchange = await call('/oauth/token', { method: 'POST', form: { grant_type: 'password' }, headers: { Origin: origin } });
      // The gateway's own answer on every hostname: the custom domain's, the EU one and the stage URL.
      const unknown = await Promise.all([stack.apiUrl, `${EU_ORIGIN}/api/v1`, stack.stageUrl].map((base) => call(`${base}/no/such/path`, { headers: { Origin: origin } })));
      for (const answer of [listed, refused, exchange, ...unknown]) {
        expect(answer.headers.get('access-control-allow-origin')).toBe('*');
        expect(answer.headers.get('access-control-expose-headers')).toBe('X-Request-Id, X-Generation-Id, Retry-After, WWW-Authenticate, DPoP-Nonce');
      }
      expect([listed.status, refused.status, exchange.status, ...unknown.map((answer) => answer.status)]).toEqual([200, 401, 400, 404, 404, 404]);
    });

    it('answers HEAD on a GET route as the GET, without a body', async () => {
      const get = await stack.deployment.gateway.fetch(`${stack.apiUrl}/models/count`, { headers: { Authorization: `Bearer ${stack.demo.keys.workspace}` } });
      const head = await stack.deployment.gateway.fetch(`${stack.apiUrl}/models/count`, { method: 'HEAD', headers: { Authorization: `Bearer ${stack.demo.keys.workspace}` } });
      expect([head.status, head.headers.get('content-type'), await head.text()]).toEqual([200, 'application/json', '']);
      expect(head.headers.get('content-length')).toBe(String(Buffer.byteLength(await get.text())));
      expect(stack.deployment.gateway.requests.at(-1)!.event?.httpMethod).toBe('HEAD');
    });

    it("lists GET /models to the openai client's models.list(), the call OpenAI-compatible tools make first", async () => {
      const openai = new OpenAI({ apiKey: stack.demo.keys.workspace, baseURL: stack.apiUrl, fetch: stack.deployment.gateway.fetch, maxRetries: 0 });
      const ids: string[] = [];
      for await (const model of openai.models.list()) ids.push(model.id);
      expect(ids).toContain('openai/gpt-4o-mini');
      expect(stack.deployment.gateway.requests.at(-1)!.resource).toBe(`${API_BASE_PATH}/models`);
    });
  });
});
