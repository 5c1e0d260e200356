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
  /^(catalog\/catalog-api|management\/management-api|management\/operation|inference\/inference-api|pages\/page-server)\.ts$/,
  // The management API's handlers, one file per resource, bound to their routes by operation id.
  /^management\/operations\//,
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

/** STYLE.md 11: jose verifies every JWS; node:crypto and KMS may sign, never verify. */
describe('JWS verification', () => {
  it('is left to jose: no module under lambdas/ verifies a signature with node:crypto or WebCrypto', () => {
    const offenders = sources(LAMBDAS).filter((file) => {
      const source = readFileSync(file, 'utf8');
      return (
        /import\s*\{[^}]*\b(verify|createVerify)\b[^}]*\}\s*from\s*'(node:)?crypto'/.test(source) ||
        /\b(crypto|subtle)\.(verify|createVerify)\(/.test(source)
      );
    });
    expect(offenders.map((file) => relative(LAMBDAS, file))).toEqual([]);
  });
});
