import { readFileSync, statSync } from 'node:fs';
import { filesBelow } from './support/source-tree';
import { dirname, join, normalize, relative } from 'node:path';

/**
 * The house as the folders show it: each folder (a room) imports only the rooms below it, so
 * the layers read from the tree; and no file is too long to read. docs/architecture.md, "Layers",
 * draws the same order.
 */
const ROOT = join(__dirname, '..');

/** The rooms of lambdas/, top first: a file may import its own room and the rooms after it. */
const LAMBDA_LAYERS = [
  ['functions/'],
  ['document/'],
  ['wiring/'],
  ['config.ts'],
  ['aws/'],
  ['routes.ts'],
  ['management/', 'inference/'],
  ['spending/'],
  ['usage/'],
  ['oauth/', 'pages/', 'catalog/', 'settings.ts'],
  ['providers/'],
  ['federation/', 'http/'],
  ['credentials/'],
  ['accounts/', 'openapi/'],
  ['signing/', 'usd.ts', 'route-definition.ts', 'ids.ts'],
  ['observability/', 'clock.ts', 'hostname.ts', 'errors.ts', 'decimal.ts', 'counts.ts', 'base-paths.ts', 'batches.ts'],
] as const;

/** The features: what the protocol layers (http/, openapi/) must not know. */
const FEATURES = ['management/', 'inference/', 'oauth/', 'pages/', 'catalog/', 'federation/', 'spending/', 'usage/', 'document/', 'routes.ts'];

/** The top folders, top first, as the same rule reads them. */
const TOP_LAYERS = [['bench/', 'scripts/', 'bin/'], ['ops/'], ['local/'], ['lib/'], ['web/'], ['lambdas/']] as const;

/** The files below `dir` whose name ends as `ending` says, generated code aside. */
const files = (dir: string, ending: RegExp): string[] => filesBelow(dir, (name) => ending.test(name) && !name.includes('.generated.'));

/** Every relative import of a file (type imports and re-exports included), as a path from the root. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specifiers = [...text.matchAll(/(?:from|import|require\()\s*\(?\s*'(\.{1,2}\/[^']*)'/g)].map((match) => match[1]!);
  return specifiers.map((specifier) => relative(ROOT, normalize(join(dirname(file), specifier))));
}

/** The room of a path under `base`: its first folder, or the file itself at the top. */
function roomOf(path: string, base: string): string | undefined {
  if (!path.startsWith(base)) return undefined;
  const rest = path.slice(base.length);
  const slash = rest.indexOf('/');
  if (slash !== -1) return rest.slice(0, slash + 1);
  return /\.(ts|js)$/.test(rest) ? rest : `${rest}.ts`;
}

function layerIndex(layers: readonly (readonly string[])[], room: string): number {
  return layers.findIndex((layer) => layer.includes(room));
}

/** Each import of files under `base` that runs from a lower layer to a higher one. */
function upwardImports(base: string, layers: readonly (readonly string[])[], roomOfPath: (path: string) => string | undefined): string[] {
  return files(join(ROOT, base), /\.(ts|js)$/).flatMap((file) => {
    const from = relative(ROOT, file);
    const fromRoom = roomOfPath(from)!;
    return importsOf(file).flatMap((target) => {
      const toRoom = roomOfPath(target);
      if (toRoom === undefined || toRoom === fromRoom) return [];
      return layerIndex(layers, toRoom) < layerIndex(layers, fromRoom) ? [`${from} -> ${target}`] : [];
    });
  });
}

describe('layers', () => {
  it('place every room of lambdas/', () => {
    const rooms = new Set(files(join(ROOT, 'lambdas'), /\.(ts|js)$/).map((file) => roomOf(relative(ROOT, file), 'lambdas/')!));
    expect([...rooms].filter((room) => layerIndex(LAMBDA_LAYERS, room) === -1)).toEqual([]);
  });

  it('run downward in lambdas/: no import climbs to a room above its own', () => {
    expect(upwardImports('lambdas', LAMBDA_LAYERS, (path) => roomOf(path, 'lambdas/'))).toEqual([]);
  });

  it('run downward between the top folders: lambdas/ imports none of them, local/ no ops/', () => {
    const upward = (['lambdas', 'web', 'lib', 'local', 'ops'] as const).flatMap((base) => upwardImports(base, TOP_LAYERS, (path) => roomOf(path, '')));
    expect(upward).toEqual([]);
  });

  it('keep the protocol layers ignorant of the features: http/ and openapi/ import none', () => {
    const known = ['http', 'openapi'].flatMap((folder) =>
      files(join(ROOT, 'lambdas', folder), /\.ts$/).flatMap((file) => importsOf(file).map((target) => [relative(ROOT, file), roomOf(target, 'lambdas/')] as const)),
    );
    expect(known.filter(([, room]) => room !== undefined && FEATURES.includes(room))).toEqual([]);
    // Checked on real imports: the dispatcher does import what lies below it.
    expect(known).toEqual(expect.arrayContaining([['lambdas/http/dispatcher.ts', 'route-definition.ts']]));
  });

  it('leave the route registry to the entries: only functions/ and the document import lambdas/routes.ts', () => {
    const importers = files(join(ROOT, 'lambdas'), /\.ts$/)
      .filter((file) => importsOf(file).includes('lambdas/routes'))
      .map((file) => roomOf(relative(ROOT, file), 'lambdas/'));
    expect(new Set(importers)).toEqual(new Set(['functions/', 'document/']));
  });
});

describe('files', () => {
  it('hold at most 400 lines each, sources and tests alike (generated code and data aside)', () => {
    const checked = ['lambdas', 'lib', 'local', 'ops', 'web', 'bench', 'scripts', 'bin', 'test'].flatMap((dir) => files(join(ROOT, dir), /\.(ts|js|mjs|cjs)$/));
    const long = checked
      .filter((file) => statSync(file).isFile())
      .map((file) => [relative(ROOT, file), readFileSync(file, 'utf8').split('\n').length - 1] as const)
      .filter(([, lines]) => lines > 400);
    expect(long).toEqual([]);
    expect(checked.length).toBeGreaterThan(300);
  });
});
