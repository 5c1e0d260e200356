import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { ROUTES } from '../../lambdas/routes';
import { startTestService, type TestService } from '../support/local-service';

const ROOT = join(__dirname, '..', '..');
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** `METHOD /path` of every operation of the public document (paths below the API base path), in its order. */
function publicOperations(): string[] {
  const document = parse(readFileSync(join(ROOT, 'test/fixtures/openapi.yaml'), 'utf8')) as { paths: Record<string, Record<string, unknown>> };
  return Object.entries(document.paths).flatMap(([path, item]) => METHODS.filter((method) => method in item).map((method) => `${method.toUpperCase()} ${path}`));
}

const served = new Set(ROUTES.filter((route) => route.base === undefined).map((route) => `${route.method} ${route.path}`));
const unserved = publicOperations().filter((operation) => !served.has(operation));

/**
 * docs/clients.md names every public route modelgate does not serve, and a client that calls
 * one gets the documented 404 in the common error shape, never a crash or an HTML page.
 */
describe('the public routes modelgate does not serve', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService();
  });
  afterAll(async () => {
    await service?.stop();
  });

  it('are each listed in docs/clients.md', () => {
    const text = readFileSync(join(ROOT, 'docs/clients.md'), 'utf8');
    const section = text.slice(text.indexOf('## Routes not served'));
    expect(unserved.length).toBeGreaterThan(20);
    expect(unserved.filter((operation) => !section.includes(`\`${operation}\``))).toEqual([]);
  });

  it('answer a client 404 in the common error shape, with its request id', async () => {
    for (const operation of unserved.filter((o) => !o.includes('{')).slice(0, 12)) {
      const [method, path] = operation.split(' ') as [string, string];
      const answer = await service.call(path, { method, key: service.runtime.demo.keys.workspace, ...(method === 'GET' ? {} : { body: {} }) });
      expect([operation, answer.status === 404 || answer.status === 405, answer.body?.error?.code, typeof answer.headers.get('x-request-id')]).toEqual([
        operation,
        true,
        answer.status,
        'string',
      ]);
    }
  });
});
