import ts from 'typescript';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { filesBelow } from '../support/source-tree';

const LAMBDAS = join(__dirname, '..', '..', 'lambdas');

/** Where HTTP lives: the protocol boundaries, the route adapters, and the composition roots. */
const HTTP_LAYER = [
  /^http\//,
  /^oauth\/(oauth-errors|oauth-handler|token-request)\.ts$/,
  /^functions\//,
  /^observability\//,
  // Route adapters: parse the event, call the domain, format the reply: handlers only wire.
  /^(catalog\/catalog-api|management\/management-api|management\/operation|inference\/inference-api|inference\/relay|inference\/answer-shapes|inference\/responses-shape|pages\/page-server)\.ts$/,
  // The management API's handlers, one file per resource, bound to their routes by operation id.
  /^management\/operations\//,
];

/** Every TypeScript file below `dir`. */
const sources = (dir: string): string[] => filesBelow(dir, (name) => name.endsWith('.ts'));

/**
 * Where the AWS SDK may be imported: the AWS adapters, the functions' entries and
 * dependencies (composition), and the wiring they share. Everything else talks to interfaces.
 */
const AWS_LAYER = [/^aws\//, /^functions\//, /^wiring\//];

/**
 * One error hierarchy, one serializer per protocol: domain code throws domain errors (lambdas/errors.ts) and knows nothing of
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

describe('types', () => {
  it('are not forced: at most 3 double casts (`as unknown as`) in lambdas/, each where a table of handlers meets its generic types', () => {
    const casts = sources(LAMBDAS)
      .filter((file) => !file.includes('.generated.'))
      .flatMap((file) => readFileSync(file, 'utf8').split('\n').flatMap((line, i) => (line.includes('as unknown as') ? [`${relative(LAMBDAS, file)}:${i + 1}`] : [])));
    expect(casts.length).toBeLessThanOrEqual(3);
  });
});

describe('the AWS SDK', () => {
  it('is imported by the AWS adapters (lambdas/aws/) and the composition (functions/, wiring/) only', () => {
    const importers = sources(LAMBDAS)
      .map((file) => relative(LAMBDAS, file))
      .filter((file) => /from '@aws-sdk\//.test(readFileSync(join(LAMBDAS, file), 'utf8')));
    expect(importers.filter((file) => !AWS_LAYER.some((pattern) => pattern.test(file)))).toEqual([]);
    // The rule is checked on real files: the adapters do import it.
    expect(importers).toEqual(expect.arrayContaining(['aws/kms-signer.ts', 'aws/secrets-manager-credentials.ts', 'aws/dynamo-client.ts']));
  });
});

/**
 * One way to do each thing: requests reach their operation through the one dispatcher the route registry
 * drives, which alone finds the route from the request: no handler reads the API Gateway
 * resource (`event.resource`, `requestContext.resourcePath`) to choose what to do.
 */
describe('dispatch', () => {
  it('reads the API Gateway resource of an event in lambdas/http/dispatcher.ts only', () => {
    const reads = [
      // event.resource, requestContext.resourcePath
      /\.resource(Path)?\b(?!\s*\()/,
      /\[\s*['"`]resource(Path)?['"`]\s*\]/,
      // const { resource } = event; ({ resource }) => …
      /(\b(const|let|var)\s*|\(\s*)\{[^}\n]*\bresource(Path)?\b[^}\n]*\}/,
    ];
    const readers = sources(LAMBDAS)
      .filter((file) => reads.some((pattern) => pattern.test(readFileSync(file, 'utf8'))))
      .map((file) => relative(LAMBDAS, file));
    // The rule is checked on real files: the dispatcher does read it.
    expect(readers).toEqual(['http/dispatcher.ts']);
  });
});

/** Protocol machinery from the library made for it: jose verifies every JWS; node:crypto and KMS may sign, never verify. */
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

/** A module graph without cycles: each module can be read, and loaded, before the ones that use it. */
describe('imports', () => {
  it('form no cycle across lambdas/, lib/, local/ and ops/ (type imports included)', async () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const madge = require('madge') as (paths: string[], config: Record<string, unknown>) => Promise<{ circular(): string[][] }>;
    const root = join(LAMBDAS, '..');
    const graph = await madge(['lambdas', 'lib', 'local', 'ops'].map((dir) => join(root, dir)), { baseDir: root, fileExtensions: ['ts'] });
    expect(graph.circular()).toEqual([]);
  });
});

/**
 * A request's credentials (lambdas/credentials/) are used by the protocols and the exchange,
 * never the other way round: the authentication path does not climb into OAuth and back.
 */
describe('credentials', () => {
  const importsOf = (folder: string) =>
    sources(join(LAMBDAS, folder)).flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/from '(\.[^']*)'/g)].map((match) => [relative(LAMBDAS, file), relative(LAMBDAS, join(dirname(file), match[1]!))] as const),
    );

  it('import nothing from lambdas/oauth, lambdas/http or lambdas/federation', () => {
    const imports = importsOf('credentials');
    expect(imports.filter(([, target]) => /^(oauth|http|federation)\//.test(target))).toEqual([]);
    // The rule is checked on real files: credentials do import what lies below them.
    expect(imports).toEqual(expect.arrayContaining([['credentials/authenticate.ts', 'accounts/account-store']]));
  });

  it('leave lambdas/accounts without an import of lambdas/oauth', () => {
    const imports = importsOf('accounts');
    expect(imports.filter(([, target]) => /^oauth\//.test(target))).toEqual([]);
    expect(imports.length).toBeGreaterThan(0);
  });
});

/**
 * One way to do each thing: one item access (lambdas/aws/dynamo-items.ts). Every DynamoDB page is followed by
 * its paginators, every conditional write goes through its one helper, every record leaves the
 * table through its one `strip`.
 */
describe('DynamoDB item access', () => {
  const ROOT = join(LAMBDAS, '..');
  const ITEM_ACCESS = 'lambdas/aws/dynamo-items.ts';
  const code = ['lambdas', 'local', 'ops'].flatMap((dir) => sources(join(ROOT, dir))).map((file) => relative(ROOT, file));
  const outside = (pattern: RegExp) => code.filter((file) => file !== ITEM_ACCESS && pattern.test(readFileSync(join(ROOT, file), 'utf8')));
  const itemAccess = readFileSync(join(ROOT, ITEM_ACCESS), 'utf8');

  it('follows LastEvaluatedKey in the item-access module only', () => {
    expect(outside(/LastEvaluatedKey/)).toEqual([]);
    // The rule is checked on the real module: the page helper follows it there.
    expect(itemAccess).toMatch(/LastEvaluatedKey/);
  });

  it("reads DynamoDB's condition failure in the item-access module only", () => {
    expect(outside(/ConditionalCheckFailed|isConditionalCheckFailed/)).toEqual([]);
    expect(itemAccess).toMatch(/ConditionalCheckFailedException/);
  });

  it('sends every DynamoDB request: no other module under lambdas/ calls `.send(` on an AWS client but the KMS, Secrets Manager and Bedrock adapters', () => {
    const OTHER_SERVICES = ['lambdas/aws/kms-signer.ts', 'lambdas/aws/secrets-manager-credentials.ts', 'lambdas/aws/bedrock-converse.ts'];
    const lambdas = code.filter((file) => file.startsWith('lambdas/'));
    const source = (file: string) => readFileSync(join(ROOT, file), 'utf8');
    // A client's `send` takes a command the module imports from the SDK: a `.send(` in a module
    // that imports none (a response stream's) is no AWS request.
    const senders = lambdas.filter((file) => /\.send\(/.test(source(file)) && /from '@aws-sdk\//.test(source(file)));
    expect(senders.filter((file) => file !== ITEM_ACCESS && !OTHER_SERVICES.includes(file))).toEqual([]);
    const commandImporters = lambdas.filter((file) =>
      [...source(file).matchAll(/import\s*\{([^}]*)\}\s*from\s*'@aws-sdk\/(client|lib)-dynamodb'/g)].some((match) =>
        match[1]!.split(',').some((name) => /^\s*\w+Command\s*$/.test(name)),
      ),
    );
    expect(commandImporters).toEqual([ITEM_ACCESS]);
    // The rule is checked on real modules: these do send.
    expect(senders.sort()).toEqual([ITEM_ACCESS, ...OTHER_SERVICES].sort());
  });

  it('gives each adapter one way in: one that holds a DynamoItems calls no free item-access function', () => {
    const FREE = /\b(getItem|putItem|updateItem|queryAll|queryPage|batchGetAll|batchWriteAll|conditionalWrite|transactWrite|scanAll|scanPages)\(\s*(this\.)?\w*[cC]lient\b/;
    const holders = code.filter((file) => file !== ITEM_ACCESS && /new DynamoItems\(/.test(readFileSync(join(ROOT, file), 'utf8')));
    expect(holders.filter((file) => FREE.test(readFileSync(join(ROOT, file), 'utf8')))).toEqual([]);
    // The rule is checked on real adapters: several hold a DynamoItems, and the free functions call a client.
    expect(holders.length).toBeGreaterThan(5);
    expect(itemAccess).toMatch(FREE);
  });

  it('has one strip of key attributes, and no second one', () => {
    expect(outside(/function strip\b|const strip\b|\{\s*pk:\s*_\w*,\s*sk:\s*_/)).toEqual([]);
    expect(itemAccess).toMatch(/export function strip</);
  });
});

/**
 * Stores kept in process memory stand in for DynamoDB in tests and the benchmark: they live in
 * test/support/, so no function can be wired with one.
 */
describe('stand-in stores', () => {
  it('are not under lambdas/: no class there keeps its records in process memory by name', () => {
    const holders = sources(LAMBDAS)
      .filter((file) => /\bclass\s+(In)?Memory\w*/.test(readFileSync(file, 'utf8')))
      .map((file) => relative(LAMBDAS, file));
    expect(holders).toEqual([]);
    // The rule is checked on real classes: the stand-ins are found where they moved.
    const support = join(LAMBDAS, '..', 'test', 'support');
    expect(sources(support).filter((file) => /\bclass\s+Memory\w*Store\b/.test(readFileSync(file, 'utf8'))).map((file) => relative(support, file))).toEqual(
      expect.arrayContaining(['memory-rate-counter-store.ts', 'memory-proof-replay-store.ts', 'memory-jti-store.ts', 'memory-exchange-event-store.ts']),
    );
  });
});

/**
 * Short functions: a function reads top to bottom in one screen. Every function, method,
 * constructor and arrow function of the project's code (tests aside; generated and declaration
 * files aside) stays under 80 lines; a longer one becomes a sequence of named steps.
 */
describe('functions', () => {
  const ROOT = join(LAMBDAS, '..');
  const FOLDERS = ['lambdas', 'lib', 'local', 'ops', 'bin', 'web', 'scripts', 'bench'];
  const MAX_LINES = 80;

  function functionLengths(file: string): { name: string; line: number; lines: number }[] {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const found: { name: string; line: number; lines: number }[] = [];
    const visit = (node: ts.Node): void => {
      if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
        const first = source.getLineAndCharacterOfPosition(node.getStart()).line;
        const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
        const name = ts.isConstructorDeclaration(node) ? 'constructor' : node.name !== undefined ? node.name.getText(source) : '(anonymous)';
        found.push({ name, line: first + 1, lines: last - first + 1 });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
    return found;
  }

  const files = FOLDERS.flatMap((dir) => sources(join(ROOT, dir)))
    .filter((file) => !file.endsWith('.d.ts') && !/generated/.test(file) && !file.includes('node_modules'))
    .map((file) => relative(ROOT, file));

  it(`stay under ${MAX_LINES} lines each in ${FOLDERS.join(', ')}`, () => {
    const long = files.flatMap((file) =>
      functionLengths(join(ROOT, file))
        .filter(({ lines }) => lines > MAX_LINES)
        .map(({ name, line, lines }) => `${file}:${line} ${name} ${lines} lines`),
    );
    expect(long).toEqual([]);
  });

  it('are measured on real code: the folders hold functions, and a long one is counted whole', () => {
    expect(files).toEqual(expect.arrayContaining(['lambdas/oauth/exchange-token.ts', 'lib/constructs/alarms.ts', 'local/http-server.ts', 'bench/token-exchange.bench.ts']));
    const longest = Math.max(...functionLengths(join(ROOT, 'lambdas/oauth/exchange-token.ts')).map(({ lines }) => lines));
    expect(longest).toBeGreaterThan(20);
    expect(longest).toBeLessThanOrEqual(MAX_LINES);
  });
});

/**
 * The repository stands on its own: comments, OpenAPI texts and docs cite a section of
 * docs/reference.md (or another file of the repository, or a public standard), never a
 * document kept elsewhere.
 */
describe('citations', () => {
  const ROOT_DIR = join(__dirname, '..', '..');
  const CODE_FOLDERS = ['lambdas', 'lib', 'local', 'ops', 'web', 'bin', 'scripts', 'bench'];
  const docs = readdirSync(join(ROOT_DIR, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => join(ROOT_DIR, 'docs', name));
  const files = [...CODE_FOLDERS.flatMap((dir) => sources(join(ROOT_DIR, dir))), ...docs, join(ROOT_DIR, 'README.md')];
  const text = (file: string) => readFileSync(file, 'utf8');

  /** GitHub's heading anchors: lowercase, punctuation dropped, spaces to '-'. */
  const anchorOf = (heading: string) =>
    heading
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
  const anchors = new Set(
    text(join(ROOT_DIR, 'docs', 'reference.md'))
      .split('\n')
      .filter((line) => /^#{1,6} /.test(line))
      .map((line) => anchorOf(line.replace(/^#+ /, ''))),
  );

  it('never cite SPEC or STYLE sections, nor SPEC.md, STYLE.md or DESIGN.md: none is in the repository', () => {
    const offenders = files.flatMap((file) =>
      text(file)
        .split('\n')
        .flatMap((line, i) => (/\bSPEC \d/.test(line) || /\bSTYLE(\.md)? \d/.test(line) || /\b(SPEC|STYLE|DESIGN)\.md\b/.test(line) ? [`${relative(ROOT_DIR, file)}:${i + 1}`] : [])),
    );
    expect(offenders).toEqual([]);
  });

  it('name only headings that exist in docs/reference.md', () => {
    const cited = files.flatMap((file) =>
      [...text(file).matchAll(/(?<![\w.-])reference\.md#([\w-]+)/g)].map((match) => ({ file: relative(ROOT_DIR, file), anchor: match[1]! })),
    );
    // The check runs on real citations.
    expect(cited.length).toBeGreaterThan(100);
    expect(cited.filter(({ anchor }) => !anchors.has(anchor))).toEqual([]);
  });

  it('derive anchors as GitHub does', () => {
    expect(anchorOf('Organizations, workspaces and guardrails')).toBe('organizations-workspaces-and-guardrails');
    expect(anchors).toContain('the-catalog');
  });
});
