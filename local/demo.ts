import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import OpenAI from 'openai';
import { hashApiKey } from '../lambdas/accounts/api-keys';
import { readDevCertificateAuthority } from './dev-ca';
import { startDevIdentityProvider, type DevIdentityProvider } from './dev-identity-provider';
import { dpopFetch, dpopProof, newDpopKey } from './dpop-fetch';
import { readJsonFile } from './files';
import type { DemoCredentials } from './seed';
import { exchangeForm } from './exchange-form';

/** A model every demo organization can use; the development provider answers it locally. */
const DEMO_MODEL = 'openai/gpt-4o-mini';

/** Where {@link runDemo} finds the running service, and where it prints each step. */
export interface DemoOptions {
  /** The running local service's data folder. @default '.local' */
  dataDir: string;
  out: (line: string) => void;
}

/** What the demo set up: the service, the running identity provider, the issuer and policy it created, and the access token it got. */
export interface DemoResult {
  baseUrl: string;
  identityProvider: DevIdentityProvider;
  issuerId: string;
  policyId: string;
  accessToken: string;
}

const SUBJECT = 'system:serviceaccount:demo:workload';
const AUDIENCE = 'modelgate-demo';

/** A failed step, said plainly; the CLI prints it and exits 1. */
export class DemoError extends Error {}

/**
 * Workload identity federation end to end against a running `npm start`: an HTTPS identity
 * provider on this machine (its certificate from the service's development CA), an issuer and
 * a policy created through the admin API, a workload JWT exchanged for an access token, the
 * token verified against the service's JWKS, then used on the catalog. Each step is printed.
 * The identity provider is returned running; the caller closes it.
 */
export async function runDemo({ dataDir, out }: DemoOptions): Promise<DemoResult> {
  const demoFile = readJsonFile(`${dataDir}/demo.json`);
  if (demoFile.status !== 'ok') {
    throw new DemoError(`${dataDir}/demo.json is ${demoFile.status}: start the service first with npm start`);
  }
  const demo = demoFile.value as DemoCredentials;
  const api = demoApi(demo.baseUrl);
  out(`1. The service at ${demo.baseUrl}`);
  expectStatus('GET /oauth/jwks', await api('GET', '/oauth/jwks'), 200);

  let identityProvider: DevIdentityProvider;
  try {
    identityProvider = await startDevIdentityProvider(readDevCertificateAuthority(dataDir));
  } catch (error) {
    throw new DemoError(`cannot start the identity provider with the development CA in ${dataDir}: ${(error as Error).message}`);
  }
  try {
    out(`2. An identity provider at ${identityProvider.issuerUrl} (certificate from ${dataDir}/dev-ca.pem, trusted by the service)`);
    const step: DemoStep = { demo, api, identityProvider, out };
    const { issuerId, policyId } = await trustTheWorkload(step);
    const accessToken = await exchangeAndVerify(step, policyId);
    await useTheAccessToken(step, accessToken);
    await showUsageAndEvent(step, policyId);
    await bindATokenWithDpop(step, policyId);
    return { baseUrl: demo.baseUrl, identityProvider, issuerId, policyId, accessToken };
  } catch (error) {
    await identityProvider.close();
    throw error;
  }
}

type DemoApi = (method: string, path: string, init?: ApiRequest) => Promise<{ status: number; headers: Headers; body: any }>;

/** What each step of the demo works with. */
interface DemoStep {
  demo: DemoCredentials;
  api: DemoApi;
  identityProvider: DevIdentityProvider;
  out: (line: string) => void;
}

/** Calls the running service; a refused connection says to start it. */
function demoApi(baseUrl: string): DemoApi {
  return async (method, path, init = {}) => {
    let response: Response;
    try {
      response = await fetch(`${baseUrl}${path}`, apiRequestInit(method, init));
    } catch {
      throw new DemoError(`nothing answers at ${baseUrl}: start the service with npm start`);
    }
    const text = await response.text();
    let parsed: any;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
    return { status: response.status, headers: response.headers, body: parsed };
  };
}

function expectStatus(what: string, response: { status: number; body: unknown }, status: number): void {
  if (response.status !== status) throw new DemoError(`${what}: expected ${status}, got ${response.status} ${JSON.stringify(response.body)}`);
}

/** Steps 3 and 4: the identity provider as an issuer, and a policy for the workload acting as the workspace key. */
async function trustTheWorkload({ demo, api, identityProvider, out }: DemoStep): Promise<{ issuerId: string; policyId: string }> {
  const issuer = await api('POST', '/workload-identity/issuers', {
    key: demo.keys.managementReadWrite,
    json: { name: `Demo identity provider ${new Date().toISOString()}`, issuer_url: identityProvider.issuerUrl },
  });
  expectStatus('POST /workload-identity/issuers', issuer, 201);
  const issuerId = issuer.body.data.id as string;
  out(`3. Issuer ${issuerId} created through the admin API (keys from ${identityProvider.issuerUrl}/.well-known/openid-configuration)`);

  const policy = await api('POST', '/workload-identity/policies', {
    key: demo.keys.managementReadWrite,
    json: { name: 'Demo workload', issuer_id: issuerId, subject: SUBJECT, audience: AUDIENCE, api_key_hash: hashApiKey(demo.keys.workspace) },
  });
  expectStatus('POST /workload-identity/policies', policy, 201);
  const policyId = policy.body.data.id as string;
  out(`4. Policy ${policyId}: sub ${SUBJECT}, aud ${AUDIENCE}, acting as the demo workspace key (scope ${policy.body.data.scope})`);
  return { issuerId, policyId };
}

/** Steps 5 to 7: a workload JWT exchanged for an access token, verified as any resource server would. */
async function exchangeAndVerify({ demo, api, identityProvider, out }: DemoStep, policyId: string): Promise<string> {
  const workloadJwt = identityProvider.sign({ sub: SUBJECT, aud: AUDIENCE });
  out(`5. Workload JWT signed by the identity provider (ES256, kid ${identityProvider.kid})`);

  const exchanged = await api('POST', '/oauth/token', { form: exchangeForm(workloadJwt, policyId) });
  if (exchanged.status !== 200) {
    const events = await api('GET', `/workload-identity/events?policy_id=${policyId}&limit=1`, { key: demo.keys.managementReadOnly });
    const reason = events.body?.data?.[0]?.reason;
    throw new DemoError(`the exchange was refused: ${exchanged.status} ${JSON.stringify(exchanged.body)}${reason ? `; recorded reason: ${reason}` : ''}`);
  }
  const accessToken = exchanged.body.access_token as string;
  out(`6. Exchanged at POST /oauth/token: ${exchanged.body.token_type} token, scope ${exchanged.body.scope}, expires in ${exchanged.body.expires_in} s (request id ${exchanged.headers.get('x-request-id')})`);

  const { payload } = await jwtVerify(accessToken, createRemoteJWKSet(new URL(`${demo.baseUrl}/oauth/jwks`)), {
    issuer: demo.baseUrl,
    audience: demo.baseUrl,
    typ: 'at+jwt',
    algorithms: ['ES256'],
  });
  out(
    `7. Verified with jose against ${demo.baseUrl}/oauth/jwks: kid ${decodeProtectedHeader(accessToken).kid}, sub ${payload.sub}, ` +
      `federation_policy_id ${payload.federation_policy_id}, federation_issuer_id ${payload.federation_issuer_id}`,
  );
  return accessToken;
}

/** Steps 8 and 9: the access token as the bearer on the catalog, and as the `openai` client's key. */
async function useTheAccessToken({ demo, api, out }: DemoStep, accessToken: string): Promise<void> {
  const catalog = await api('GET', '/models/user?limit=3', { key: accessToken });
  expectStatus('GET /models/user with the access token', catalog, 200);
  out(`8. The catalog with the access token as bearer: ${catalog.body.total_count} models, first ${catalog.body.data.map((m: { id: string }) => m.id).join(', ')}`);

  // The workload calls inference as any OpenAI-compatible client would, the token as its key.
  const client = new OpenAI({ apiKey: accessToken, baseURL: demo.baseUrl, maxRetries: 0 });
  const stream = await client.chat.completions.create({
    model: DEMO_MODEL,
    messages: [{ role: 'user', content: 'hello from a federated workload' }],
    stream: true,
  });
  const words: string[] = [];
  for await (const chunk of stream) {
    const content = chunk.choices[0]?.delta.content;
    if (content) words.push(content);
  }
  out(`9. Streamed completion from ${DEMO_MODEL} through the openai client with the access token: ${words.length} chunks, "${words.join('')}"`);
}

/** Steps 10 and 11: what the acting key has spent, and the recorded exchange. */
async function showUsageAndEvent({ demo, api, out }: DemoStep, policyId: string): Promise<void> {
  // Usage counts against the key the policy acts as; counters land just after the answer.
  const actingKey = hashApiKey(demo.keys.workspace);
  let usage: { usage: number; usage_daily: number } | undefined;
  for (let attempt = 0; attempt < 40 && !(usage && usage.usage > 0); attempt++) {
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 50));
    usage = (await api('GET', `/keys/${actingKey}`, { key: demo.keys.managementReadOnly })).body?.data;
  }
  out(`10. Usage of the acting key ${actingKey.slice(0, 12)}…: $${usage?.usage.toFixed(8)} in all, $${usage?.usage_daily.toFixed(8)} today`);

  const events = await api('GET', `/workload-identity/events?policy_id=${policyId}&limit=1`, { key: demo.keys.managementReadOnly });
  const event = events.body?.data?.[0];
  if (event) out(`11. Exchange event: ${event.outcome} for ${event.subject} from ${event.source_ip}, request id ${event.request_id}`);
}

/** Steps 12 and 13, RFC 9449: a token bound to a key only this workload holds; a leaked copy is useless. */
async function bindATokenWithDpop({ demo, api, identityProvider, out }: DemoStep, policyId: string): Promise<void> {
  const key = await newDpopKey();
  const bound = await api('POST', '/oauth/token', {
    headers: { DPoP: await dpopProof(key, 'POST', `${demo.baseUrl}/oauth/token`) },
    form: exchangeForm(identityProvider.sign({ sub: SUBJECT, aud: AUDIENCE }), policyId),
  });
  expectStatus('POST /oauth/token with a DPoP proof', bound, 200);
  const boundToken = bound.body.access_token as string;
  out(`12. Exchanged with a DPoP proof: ${bound.body.token_type} token bound to key ${key.jkt} (cnf.jkt)`);

  const boundClient = new OpenAI({ apiKey: 'unused: the fetch below authenticates', baseURL: demo.baseUrl, maxRetries: 0, fetch: dpopFetch(boundToken, key) });
  const completion = await boundClient.chat.completions.create({ model: DEMO_MODEL, messages: [{ role: 'user', content: 'hello from a bound workload' }] });
  const stolen = await api('GET', '/models/user?limit=1', { key: boundToken });
  expectStatus('GET /models/user with the bound token as a bearer token', stolen, 401);
  out(
    `13. The openai client with a DPoP fetch (a new proof per request): "${completion.choices[0]?.message.content}"; ` +
      `the same token sent as a bearer token: ${stolen.status} ${stolen.headers.get('www-authenticate')?.split(',')[0]}`,
  );
}

/** How to exchange another token by hand while the identity provider runs. */
export function tryItYourself(result: DemoResult, dataDir: string): string[] {
  result.identityProvider.serveTokens({ sub: SUBJECT, aud: AUDIENCE });
  return [
    `The identity provider keeps running at ${result.identityProvider.issuerUrl} until Ctrl-C; GET /token there`,
    'answers a fresh workload JWT. Exchange one by hand:',
    `  curl -s ${result.baseUrl}/oauth/token \\`,
    '    -d grant_type=urn:ietf:params:oauth:grant-type:token-exchange \\',
    '    -d subject_token_type=urn:ietf:params:oauth:token-type:jwt \\',
    `    -d federation_policy_id=${result.policyId} \\`,
    `    -d subject_token=$(curl -s --cacert ${dataDir}/dev-ca.pem ${result.identityProvider.issuerUrl}/token)`,
    `Or open ${result.baseUrl.replace(/\/api\/v1$/, '/settings/workload-identity')} (sign in with keys.managementReadWrite of`,
    `${dataDir}/demo.json), and paste into the policy tester a token for the wrong audience:`,
    `  curl -s --cacert ${dataDir}/dev-ca.pem "${result.identityProvider.issuerUrl}/token?aud=https://wrong.example"`,
  ];
}

/** What a client of the API sends: the bearer credential, and a JSON or form body with its content type. */
export interface ApiRequest {
  key?: string;
  json?: unknown;
  form?: Record<string, string>;
  headers?: Record<string, string>;
}

/** The `fetch` options of an {@link ApiRequest}. */
export function apiRequestInit(method: string, request: ApiRequest): RequestInit {
  const headers: Record<string, string> = { ...request.headers };
  if (request.key) headers.Authorization = `Bearer ${request.key}`;
  if (request.json !== undefined) {
    headers['Content-Type'] = 'application/json';
    return { method, headers, body: JSON.stringify(request.json) };
  }
  if (request.form) {
    headers['Content-Type'] = 'application/x-www-form-urlencoded';
    return { method, headers, body: new URLSearchParams(request.form).toString() };
  }
  return { method, headers };
}
