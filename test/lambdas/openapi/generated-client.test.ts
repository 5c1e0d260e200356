import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { hashApiKey } from '../../../lambdas/accounts/api-keys';
import { OPENAPI_DOCUMENT } from '../../../lambdas/document/document';
import { readDevCertificateAuthority } from '../../../local/dev-ca';
import { startIdentityProvider, type TestIdentityProvider } from '../../support/identity-provider';
import { startTestService, type TestService } from '../../support/local-service';

const ROOT = join(__dirname, '../../..');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const SUBJECT = 'repo:acme/app:ref:refs/heads/main';
const AUDIENCE = 'https://modelgate.example';
const README_ORIGIN = 'http://127.0.0.1:8787';

/** The TypeScript example of docs/api.md's "The interface description", verbatim. */
function readmeExample(): string {
  const page = readFileSync(join(ROOT, 'docs', 'api.md'), 'utf8');
  const section = page.slice(page.indexOf('## The interface description'));
  const end = section.indexOf('\n## ', 1);
  const example = /```ts\n([\s\S]*?)```/.exec(end === -1 ? section : section.slice(0, end));
  if (!example) throw new Error('docs/api.md: no ```ts example in "The interface description"');
  return example[1]!;
}

/**
 * A client module written the way README shows: each function makes one typed call and
 * reads the answer through the generated types (fields, status-specific error bodies).
 */
const CLIENT = `
import createClient from 'openapi-fetch';
import type { components, paths } from './modelgate';

type Model = components['schemas']['Model'];

export const connect = (baseUrl: string, key?: string) =>
  createClient<paths>({ baseUrl, headers: key ? { Authorization: \`Bearer \${key}\` } : {} });

export async function firstModels(baseUrl: string, key: string, limit: number) {
  const { data, error, response } = await connect(baseUrl, key).GET('/api/v1/models/user', { params: { query: { limit } } });
  if (error) return { status: response.status, code: error.error.code, message: error.error.message };
  const first: Model = data.data[0];
  return {
    status: response.status,
    ids: data.data.map((model) => model.id),
    first: { id: first.id, prompt: first.pricing.prompt, completion: first.pricing.completion, contextLength: first.context_length },
  };
}

export async function createKey(baseUrl: string, admin: string, name: string) {
  const { data, error, response } = await connect(baseUrl, admin).POST('/api/v1/keys', { body: { name, kind: 'workspace' } });
  if (error) return { status: response.status, message: error.error.message };
  const hash: string = data.data.hash;
  return { status: response.status, secret: data.key, hash, name: data.data.name, disabled: data.data.disabled };
}

export async function createIssuer(baseUrl: string, admin: string, issuerUrl: string) {
  const { data, error, response } = await connect(baseUrl, admin).POST('/api/v1/workload-identity/issuers', {
    body: { name: 'CI', issuer_url: issuerUrl, check_jti: true },
  });
  if (error) return { status: response.status, message: error.error.message };
  const issuer: components['schemas']['Issuer'] = data.data;
  return { status: response.status, id: issuer.id, issuerUrl: issuer.issuer_url, keys: issuer.jwks?.keys.length ?? null, checkJti: issuer.check_jti };
}

/** openapi-fetch does not check excess body properties: this misspelt \`jwks_url\` compiles, and the gateway refuses it. */
export async function createIssuerMisspelt(baseUrl: string, admin: string) {
  const { error, response } = await connect(baseUrl, admin).POST('/api/v1/workload-identity/issuers', {
    body: { name: 'CI', issuer_url: 'https://idp.example', jwks_uri: 'https://idp.example/keys' },
  });
  return { status: response.status, message: error?.error.message, parameter: error?.error.metadata?.parameter };
}

export async function createPolicy(baseUrl: string, admin: string, policy: { issuerId: string; subject: string; audience: string; keyHash: string }) {
  const { data, error, response } = await connect(baseUrl, admin).POST('/api/v1/workload-identity/policies', {
    body: { name: 'Deploy', issuer_id: policy.issuerId, subject: policy.subject, audience: policy.audience, api_key_hash: policy.keyHash },
  });
  if (error) return { status: response.status, message: error.error.message };
  const scope: 'inference' | 'management' = data.data.scope;
  return { status: response.status, id: data.data.id, scope, enabled: data.data.enabled, actsAs: data.data.api_key_hash };
}

/** RFC 8693 through the form-encoded token endpoint; refusals are RFC 6749 error bodies. */
export async function exchange(baseUrl: string, subjectToken: string, policyId: string) {
  const { data, error, response } = await connect(baseUrl).POST('/api/v1/oauth/token', {
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    // Serialized here: the default serializer recognises a form by \`headers.get instanceof Function\`,
    // which is false for Headers from another realm, such as the test runner's sandbox.
    bodySerializer: (form) => new URLSearchParams(form).toString(),
    body: {
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
      subject_token: subjectToken,
      federation_policy_id: policyId,
    },
  });
  if (error) return { status: response.status, error: error.error, description: error.error_description };
  const token: string = data.access_token;
  return { status: response.status, token, tokenType: data.token_type, scope: data.scope, expiresIn: data.expires_in };
}

export async function createGuardrail(baseUrl: string, admin: string, name: string) {
  const { data, error, response } = await connect(baseUrl, admin).POST('/api/v1/guardrails', { body: { name, enforce_zdr: false } });
  if (error) return { status: response.status, message: error.error.message };
  const id: string = data.data.id;
  return { status: response.status, id, name: data.data.name };
}

export async function assignToGuardrail(baseUrl: string, admin: string, id: string, keyHashes: string[]) {
  const { data, error, response } = await connect(baseUrl, admin).POST('/api/v1/guardrails/{id}/assignments/keys', {
    params: { path: { id } },
    body: { key_hashes: keyHashes },
  });
  if (error) return { status: response.status, message: error.error.message };
  const assigned: number = data.assigned_count;
  return { status: response.status, assigned };
}
`;

/** The exports of {@link CLIENT} as this test calls them; the client project checks their real types. */
type ClientModule = Record<'firstModels' | 'createKey' | 'createIssuer' | 'createIssuerMisspelt' | 'createPolicy' | 'exchange' | 'createGuardrail' | 'assignToGuardrail', (...args: any[]) => Promise<any>>;

/**
 * Misuses the generated types must refuse: each statement, and what the compiler says of it.
 * Each is right but for the one mistake, so the error is the one expected and on its line.
 */
const MISUSES: Record<string, { statement: string; error: string }> = {
  unknownPath: {
    statement: `client.GET('/api/v1/model/user', {});`,
    error: `TS2345 Argument of type '"/api/v1/model/user"' is not assignable to parameter of type 'PathsWithMethod<paths, "get">'`,
  },
  pathWithoutPrefix: {
    statement: `client.GET('/models/user', {});`,
    error: `TS2345 Argument of type '"/models/user"' is not assignable to parameter of type 'PathsWithMethod<paths, "get">'`,
  },
  wrongMethod: {
    statement: `client.DELETE('/api/v1/models/user', {});`,
    error: `TS2345 Argument of type '"/api/v1/models/user"' is not assignable to parameter of type 'PathsWithMethod<paths, "delete">'`,
  },
  queryParameterType: {
    statement: `client.GET('/api/v1/models/user', { params: { query: { limit: '5' } } });`,
    error: `TS2322 Type 'string' is not assignable to type 'number'`,
  },
  bodyFieldType: {
    statement: `client.POST('/api/v1/guardrails/{id}/assignments/keys', { params: { path: { id: 'g' } }, body: { key_hashes: 'a' } });`,
    error: `TS2322 Type 'string' is not assignable to type 'string[]'`,
  },
  keyKind: {
    statement: `client.POST('/api/v1/keys', { body: { name: 'ci', kind: 'admin' } });`,
    error: `TS2322 Type '"admin"' is not assignable to type '"workspace" | "management" | "personal" | undefined'`,
  },
  policyWithoutAudience: {
    statement: `client.POST('/api/v1/workload-identity/policies', { body: { name: 'Deploy', issuer_id: 'i', subject: 's', api_key_hash: 'h' } });`,
    error: `Property 'audience' is missing`,
  },
  missingPathParameter: {
    statement: `client.POST('/api/v1/guardrails/{id}/assignments/keys', { body: { key_hashes: [] } });`,
    error: `Property 'params' is missing`,
  },
  missingFormField: {
    statement: `client.POST('/api/v1/oauth/token', { body: { grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange', subject_token_type: 'urn:ietf:params:oauth:token-type:jwt', federation_policy_id: 'p' } });`,
    error: `Property 'subject_token' is missing`,
  },
  unknownResponseField: {
    statement: `client.GET('/api/v1/models/user').then(({ data }) => data?.data[0].price);`,
    error: `TS2339 Property 'price' does not exist on type '{ alias_target?:`,
  },
  errorBodyShape: {
    statement: `client.GET('/api/v1/models/user').then(({ error }) => error?.message);`,
    error: `TS2339 Property 'message' does not exist on type '{ error: { code: number; message: string;`,
  },
};
const misuseFile = (statement: string) =>
  `import createClient from 'openapi-fetch';\nimport type { paths } from './modelgate';\nconst client = createClient<paths>({ baseUrl: '${README_ORIGIN}' });\n${statement}\n`;
const MISUSE_LINE = 3;

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** What a strict project of a user would compile the client with. */
const COMPILER_OPTIONS: ts.CompilerOptions = {
  strict: true,
  noEmit: true,
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  lib: ['lib.es2023.d.ts'],
  types: ['node'],
  skipLibCheck: true,
};

/** `file:line code message` of each diagnostic, relative to the client project. */
function describeDiagnostics(diagnostics: readonly ts.Diagnostic[], dir: string) {
  return diagnostics.map((d) => {
    const where = d.file ? `${d.file.fileName.slice(dir.length + 1)}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line}` : '-';
    return `${where} TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, ' / ')}`;
  });
}

/**
 * What README promises: openapi-typescript turns the served document into types, and a client
 * written with openapi-fetch against them compiles under strict settings, refuses misuse at
 * compile time, and works against the running gateway.
 */
describe('a client generated from the OpenAPI document', () => {
  let dir: string;
  let service: TestService;
  let idp: TestIdentityProvider;
  let origin: string;
  let servedTypes: string;

  beforeAll(async () => {
    service = await startTestService();
    idp = await startIdentityProvider({ ca: readDevCertificateAuthority(service.runtime.dataDir) });
    origin = new URL(service.runtime.baseUrl).origin;

    dir = mkdtempSync(join(tmpdir(), 'modelgate-client-'));
    // The client project resolves openapi-fetch and @types/node as a user's project would.
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
    // As README's command does: the types of the document the running service serves.
    servedTypes = astToString(await openapiTS(new URL('/api/v1/openapi.json', origin)));
    writeFileSync(join(dir, 'modelgate.d.ts'), servedTypes);
    writeFileSync(join(dir, 'client.ts'), CLIENT);
    writeFileSync(join(dir, 'readme-example.ts'), readmeExample());
    for (const [name, { statement }] of Object.entries(MISUSES)) writeFileSync(join(dir, `misuse-${name}.ts`), misuseFile(statement));
  });
  afterAll(async () => {
    await idp?.close();
    await service?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('generates the same types from the served document as from the document in the code', async () => {
    expect(servedTypes).toContain('"/api/v1/models/user": {');
    expect(servedTypes).toBe(astToString(await openapiTS(structuredClone(OPENAPI_DOCUMENT) as never)));
  });

  describe('compile time (one strict program for the client, the README example and every misuse)', () => {
    let diagnostics: Map<string, string[]>;

    beforeAll(() => {
      const roots = ['client.ts', 'readme-example.ts', ...Object.keys(MISUSES).map((name) => `misuse-${name}.ts`)];
      const program = ts.createProgram(roots.map((file) => join(dir, file)), COMPILER_OPTIONS);
      diagnostics = new Map(roots.map((file) => [file, describeDiagnostics(ts.getPreEmitDiagnostics(program, program.getSourceFile(join(dir, file))), dir)]));
      diagnostics.set('global', describeDiagnostics([...program.getGlobalDiagnostics(), ...program.getOptionsDiagnostics()], dir));
    });

    it('type-checks the client and the README example without an error', () => {
      expect({ global: diagnostics.get('global'), client: diagnostics.get('client.ts'), readme: diagnostics.get('readme-example.ts') }).toEqual({
        global: [],
        client: [],
        readme: [],
      });
    });

    it.each(Object.entries(MISUSES))('refuses the misuse %s, on its line', (name, { error }) => {
      expect(diagnostics.get(`misuse-${name}.ts`)).toEqual([expect.stringMatching(new RegExp(`^misuse-${name}\\.ts:${MISUSE_LINE} .*${escape(error)}`))]);
    });
  });

  describe('run time, against the local service', () => {
    it('runs the README example', async () => {
      process.env.MODELGATE_API_KEY = service.runtime.demo.keys.workspace;
      expect(readmeExample().split(README_ORIGIN).length).toBe(2);
      const lines: unknown[][] = [];
      const log = jest.spyOn(console, 'log').mockImplementation((...args) => void lines.push(args));
      try {
        await runModule(readmeExample().replace(README_ORIGIN, origin));
      } finally {
        log.mockRestore();
        delete process.env.MODELGATE_API_KEY;
      }
      const expected = (await service.call('/models/user?limit=5', { key: service.runtime.demo.keys.workspace })).body.data;
      expect(expected).toHaveLength(5);
      expect(lines).toEqual(expected.map((model: { id: string; pricing: { prompt: string } }) => [model.id, model.pricing.prompt]));
    });

    it('lists the models through the typed fields of Model', async () => {
      const workspace = service.runtime.demo.keys.workspace;
      const raw = (await service.call('/models/user?limit=3', { key: workspace })).body.data;
      expect(raw).toHaveLength(3);
      expect(await client().firstModels(origin, workspace, 3)).toEqual({
        status: 200,
        ids: raw.map((model: { id: string }) => model.id),
        first: { id: raw[0].id, prompt: raw[0].pricing.prompt, completion: raw[0].pricing.completion, contextLength: raw[0].context_length },
      });
    });

    it('reads the common error body (docs/reference.md#the-common-error-body) of a refusal', async () => {
      expect(await client().firstModels(origin, service.runtime.demo.keys.workspace, 0)).toEqual({
        status: 400,
        code: 400,
        message: 'Invalid limit: must be an integer from 1 to 1000',
      });
      expect(await client().firstModels(origin, 'not-a-key', 1)).toEqual({ status: 401, code: 401, message: 'Invalid API key' });
    });

    it('creates a key, an issuer and a policy, exchanges a workload token through the form, and calls with the access token', async () => {
      const admin = service.runtime.demo.keys.managementReadWrite;
      const key = await client().createKey(origin, admin, 'federated CI');
      expect(key).toEqual({ status: 201, secret: expect.stringMatching(/^sk-mg-v1-[0-9a-f]{64}$/), hash: expect.any(String), name: 'federated CI', disabled: false });
      expect(key.hash).toBe(hashApiKey(key.secret));
      const issuer = await client().createIssuer(origin, admin, idp.issuerUrl);
      // Neither keys nor a key URL: the issuer's keys come from OpenID discovery.
      expect(issuer).toEqual({ status: 201, id: expect.stringMatching(UUID), issuerUrl: idp.issuerUrl, keys: null, checkJti: true });
      const policy = await client().createPolicy(origin, admin, { issuerId: issuer.id, subject: SUBJECT, audience: AUDIENCE, keyHash: key.hash });
      // docs/reference.md#federation-policies: a workspace key's policy issues inference tokens.
      expect(policy).toEqual({ status: 201, id: expect.stringMatching(UUID), scope: 'inference', enabled: true, actsAs: key.hash });

      const subjectToken = () => idp.sign({ sub: SUBJECT, aud: AUDIENCE, jti: randomUUID(), exp: Math.floor(Date.now() / 1000) + 3600 });
      const exchanged = await client().exchange(origin, subjectToken(), policy.id);
      // The subject token outlives the 900-second maximum (docs/reference.md#limits), so the access token gets all of it.
      expect(exchanged).toEqual({ status: 200, token: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/), tokenType: 'Bearer', scope: 'inference', expiresIn: 900 });
      const raw = (await service.call('/models/user?limit=2', { key: key.secret })).body.data;
      expect(await client().firstModels(origin, exchanged.token, 2)).toMatchObject({ status: 200, ids: raw.map((model: { id: string }) => model.id) });

      // docs/reference.md#oauth-errors: refusals of the token endpoint are RFC 6749 error bodies.
      expect(await client().exchange(origin, subjectToken(), randomUUID())).toEqual({
        status: 400,
        error: 'invalid_grant',
        description: expect.stringMatching(/^The subject token or federation policy is not valid \(request id [0-9a-f-]{36}\)$/),
      });
      // docs/reference.md#the-common-error-body on the admin API: the same issuer URL twice in one organization.
      expect(await client().createIssuer(origin, admin, idp.issuerUrl)).toEqual({
        status: 409,
        message: `An issuer with issuer_url ${idp.issuerUrl} already exists in this organization`,
      });
      expect(await client().createIssuerMisspelt(origin, admin)).toEqual({ status: 400, message: 'Invalid jwks_uri: is not a known field', parameter: 'jwks_uri' });
    });

    it('creates a guardrail and assigns keys to it with a typed path parameter and body', async () => {
      const admin = service.runtime.demo.keys.managementReadWrite;
      const name = `EU ${randomUUID()}`;
      const guardrail = await client().createGuardrail(origin, admin, name);
      expect(guardrail).toEqual({ status: 201, id: expect.stringMatching(UUID), name });
      const workspaceHash = hashApiKey(service.runtime.demo.keys.workspace);
      expect(await client().assignToGuardrail(origin, admin, guardrail.id, [workspaceHash])).toEqual({ status: 200, assigned: 1 });
      expect(await client().assignToGuardrail(origin, admin, guardrail.id, ['not-a-hash'])).toEqual({
        status: 400,
        message: 'Invalid key_hashes: item 0 must be a key hash (64 lowercase hexadecimal characters)',
      });
      // A management key that may only read is refused with 403 and the common error body (docs/reference.md#the-common-error-body).
      expect(await client().createGuardrail(origin, service.runtime.demo.keys.managementReadOnly, name)).toEqual({
        status: 403,
        message: 'This management key is read-only',
      });
    });
  });

  /** The client module, compiled by the test's own transform; its types were checked above. */
  const client = (): ClientModule => require(join(dir, 'client.ts'));

  /**
   * Runs a module written for top-level await: its statements become the body of an exported
   * async function in the client project, which the test's own transform compiles.
   */
  async function runModule(source: string) {
    const imports = source.split('\n').filter((line) => line.startsWith('import '));
    const body = source.split('\n').filter((line) => !line.startsWith('import '));
    const file = join(dir, `run-${randomUUID()}.ts`);
    writeFileSync(file, `${imports.join('\n')}\nexport async function main() {\n${body.join('\n')}\n}\n`);
    await require(file).main();
  }
});
