import { HTTPClient, OpenRouter } from '@openrouter/sdk';
import { API_BASE_PATH } from '../../lambdas/routes';
import { startTestService, type TestService } from './local-service';

/**
 * The official SDK (1.3.x) on the management API of a local service, unchanged: its own request
 * serialisers (camelCase in, the public snake_case bodies out) and its own zod response parsers.
 *
 * Unlike `models.listForUser`, these operations authenticate with the client's `apiKey`.
 * The list operations send `limit` and `offset` whenever a request is given (50 and 0 by
 * default), neither without one; their paginator asks for `offset + page length` while a page holds `limit` items (50 when not
 * given), so it ends only because modelgate honours `offset` (lambdas/management/list-page.ts).
 *
 * The service, the client and the demo ids are set once the block's `beforeAll` has run;
 * `raw` may be destructured.
 */
export class ManagementSdk {
  service!: TestService;
  /** Authenticated with {@link managementKey}. */
  sdk!: OpenRouter;
  /** The demo organization's read-write management key. */
  managementKey!: string;
  /** The demo organization's default workspace. */
  workspaceId!: string;
  /** `METHOD path?query` of every request the SDK sent, in order: emptied before each test. */
  requested: string[] = [];

  /** GETs `path` with the management key, expecting a 200; gives the parsed body. */
  raw = async (path: string) => {
    const response = await this.service.call(path, { key: this.managementKey });
    expect(response.status).toBe(200);
    return response.body;
  };
}

/**
 * A local service for the enclosing block's tests, started before them and stopped after,
 * and the official SDK on its management API.
 */
export function useManagementSdk(): ManagementSdk {
  const api = new ManagementSdk();
  beforeAll(async () => {
    api.service = await startTestService();
    api.managementKey = api.service.runtime.demo.keys.managementReadWrite;
    api.workspaceId = api.service.runtime.demo.workspaceId;
    const httpClient = new HTTPClient();
    httpClient.addHook('beforeRequest', (request) => {
      const url = new URL(request.url);
      api.requested.push(`${request.method} ${url.pathname.slice(API_BASE_PATH.length)}${url.search}`);
      return request;
    });
    api.sdk = new OpenRouter({ apiKey: api.managementKey, serverURL: api.service.runtime.baseUrl, httpClient, retryConfig: { strategy: 'none' } });
  });
  afterAll(async () => {
    await api.service?.stop();
  });
  beforeEach(() => {
    api.requested = [];
  });
  return api;
}
