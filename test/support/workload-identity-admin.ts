import { randomUUID } from 'node:crypto';
import { hashApiKey } from '../../lambdas/accounts/api-keys';
import type { Plan } from '../../lambdas/accounts/types';
import { connectToRuntime, type RuntimeStores } from './accounts';
import { startTestService, type TestService } from './local-service';

/** The workload identity admin API's two collections. */
export const ISSUERS = '/workload-identity/issuers';
export const POLICIES = '/workload-identity/policies';

/** An id the service generates (a v4 UUID). */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
/** A timestamp as the API writes it. */
export const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** The body of a 400 that names the parameter at fault. */
export const badRequest = (message: string, parameter: string) => ({ error: { code: 400, message, metadata: { parameter } } });

type Body = Record<string, unknown>;

/**
 * The workload identity admin API of a local service, called with the demo organization's
 * read-write management key unless a call names another. The service, the stores and the keys
 * are set once the block's `beforeAll` has run; the methods may be destructured.
 */
export class WorkloadIdentityAdmin {
  service!: TestService;
  stores!: RuntimeStores;
  /** The demo organization's read-write management key. */
  admin!: string;
  /** Hashes of the demo workspace key and read-only management key, for a policy's `api_key_hash`. */
  workspaceKeyHash!: string;
  managementKeyHash!: string;
  private urls = 0;

  /** A second organization with its own read-write management key. */
  organization = async (plan: Plan) => {
    const { organization } = await this.stores.accounts.createOrganization({ name: `Org ${randomUUID()}`, plan });
    const { secret } = await this.stores.accounts.createApiKey(organization.id, { kind: 'management', name: 'Admin' });
    const workspace = await this.stores.accounts.createApiKey(organization.id, { kind: 'workspace', name: 'CI' });
    return { id: organization.id, admin: secret, workspaceKeyHash: workspace.key.hash };
  };

  call = (path: string, options: { key?: string; method?: string; body?: unknown } = {}) =>
    this.service.call(path, { key: this.admin, ...options });
  post = (path: string, body: unknown, key = this.admin) => this.service.call(path, { key, method: 'POST', body });
  patch = (path: string, body: unknown, key = this.admin) => this.service.call(path, { key, method: 'PATCH', body });
  remove = (path: string, key = this.admin) => this.service.call(path, { key, method: 'DELETE' });

  /** An issuer URL this helper has not given before. */
  uniqueUrl = () => `https://idp-${++this.urls}.example.com`;

  /** Creates an issuer at a {@link uniqueUrl} unless `body` names one, expecting a 201; gives its `data`. */
  createIssuer = async (body: Body = {}, key = this.admin) => {
    const response = await this.post(ISSUERS, { name: 'IdP', issuer_url: this.uniqueUrl(), ...body }, key);
    expect(response.status).toBe(201);
    return response.body.data;
  };

  /** A valid policy on `issuerId` acting as the demo workspace key, with `body`'s members over it. */
  policyBody = (issuerId: string, body: Body = {}) => ({
    name: 'Deploy',
    issuer_id: issuerId,
    subject: 'system:serviceaccount:ci:runner',
    audience: 'https://modelgate.example',
    api_key_hash: this.workspaceKeyHash,
    ...body,
  });

  /** Creates {@link policyBody}, expecting a 201; gives its `data`. */
  createPolicy = async (issuerId: string, body: Body = {}, key = this.admin) => {
    const response = await this.post(POLICIES, this.policyBody(issuerId, body), key);
    expect([response.status, response.body]).toEqual([201, expect.anything()]);
    return response.body.data;
  };
}

/**
 * A local service for the enclosing block's tests, started before them and stopped after,
 * and its workload identity admin API.
 */
export function useWorkloadIdentityAdmin(): WorkloadIdentityAdmin {
  const api = new WorkloadIdentityAdmin();
  beforeAll(async () => {
    api.service = await startTestService();
    api.stores = connectToRuntime(api.service.runtime);
    api.admin = api.service.runtime.demo.keys.managementReadWrite;
    api.workspaceKeyHash = hashApiKey(api.service.runtime.demo.keys.workspace);
    api.managementKeyHash = hashApiKey(api.service.runtime.demo.keys.managementReadOnly);
  });
  afterAll(async () => {
    api.stores.destroy();
    await api.service.stop();
  });
  return api;
}
