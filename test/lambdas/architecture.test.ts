import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const LAMBDAS = join(__dirname, '..', '..', 'lambdas');

/** Where HTTP lives: the protocol boundaries, the route adapters, and the composition roots. */
const HTTP_LAYER = [
  /^http\//,
  /^oauth\/(oauth-errors|oauth-handler|token-request)\.ts$/,
  /^handlers\//,
  /^functions\//,
  /^observability\//,
  // Route adapters: parse the event, call the domain, format the reply (STYLE.md 1).
  /^(catalog\/catalog-api|management\/management-api|inference\/inference-api)\.ts$/,
];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

/**
 * STYLE.md 3: domain code throws domain errors (lambdas/errors.ts) and knows nothing of
 * Lambda events; one boundary per protocol turns its errors into HTTP.
 */
describe('domain modules', () => {
  const domain = sources(LAMBDAS)
    .map((file) => relative(LAMBDAS, file))
    .filter((file) => !HTTP_LAYER.some((pattern) => pattern.test(file)));

  it('exist (the layering below is checked on real files)', () => {
    expect(domain).toEqual(expect.arrayContaining(['accounts/accounts-service.ts', 'catalog/catalog-index.ts', 'signing/signing-key-registry.ts', 'errors.ts']));
  });

  it('import neither aws-lambda types nor an HTTP or OAuth error class', () => {
    const offenders = domain.filter((file) => {
      const source = readFileSync(join(LAMBDAS, file), 'utf8');
      return /from '(aws-lambda|[./]*\/?http\/(api-errors|middleware|responses|streaming)|[./]*\/?oauth\/oauth-errors)'/.test(source);
    });
    expect(offenders).toEqual([]);
  });
});
