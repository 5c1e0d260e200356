import ts from 'typescript';
import { existsSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { filesBelow } from './support/source-tree';

/**
 * Comments that a maintainer reads: a short doc comment on each exported name, a line of why
 * where the code cannot say it, and no essay (design belongs in docs/architecture.md).
 */
const ROOT = join(__dirname, '..');
const SOURCES = ['lambdas', 'lib', 'local', 'ops', 'web', 'bin', 'scripts'];
/** The longest comment block, in lines: a doc comment with an example fits, an essay does not. */
const MAX_COMMENT_LINES = 12;

/** The TypeScript sources below `dir`, declarations and generated code aside. */
const files = (dir: string): string[] => filesBelow(dir, (name) => name.endsWith('.ts') && !name.endsWith('.d.ts') && !name.includes('.generated.'));

const sourceFiles = SOURCES.flatMap((dir) => files(join(ROOT, dir)));

function exportedWithoutDoc(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  return source.statements.flatMap((statement) => {
    const exported = ts.canHaveModifiers(statement) && ts.getModifiers(statement)?.some((modifier) => modifier.kind === ts.SyntaxKind.ExportKeyword);
    if (!exported || ts.isExportDeclaration(statement)) return [];
    const leading = text.slice(statement.getFullStart(), statement.getStart());
    if (leading.includes('/**')) return [];
    const line = source.getLineAndCharacterOfPosition(statement.getStart()).line + 1;
    return [`${relative(ROOT, file)}:${line}`];
  });
}

/** Each comment block of a file (a block comment, or a run of line comments) longer than the limit. */
function longComments(file: string): string[] {
  const lines = readFileSync(file, 'utf8').split('\n');
  const long: string[] = [];
  let block: { start: number; length: number; kind: 'block' | 'line' } | undefined;
  const close = () => {
    if (block && block.length > MAX_COMMENT_LINES) long.push(`${relative(ROOT, file)}:${block.start} (${block.length} lines)`);
    block = undefined;
  };
  lines.forEach((line, i) => {
    const text = line.trim();
    if (block?.kind === 'block') {
      block.length++;
      if (text.includes('*/')) close();
      return;
    }
    if (text.startsWith('//')) {
      if (block?.kind !== 'line') close();
      block ??= { start: i + 1, length: 0, kind: 'line' };
      block.length++;
      return;
    }
    close();
    if (text.startsWith('/*')) {
      block = { start: i + 1, length: 1, kind: 'block' };
      if (text.includes('*/')) close();
    }
  });
  close();
  return long;
}

/** Each path into the repository that a file names (`lambdas/routes.ts`, `docs/api.md`), as `file: path`. */
function namedPaths(file: string): { at: string; path: string }[] {
  const text = readFileSync(file, 'utf8');
  const named = [...text.matchAll(/(?<![\w.\/-])((?:lambdas|lib|local|ops|web|test|bench|scripts|docs|bin)\/[\w./-]*\w\.(?:ts|js|md|json))\b/g)];
  return named.map((match) => ({ at: relative(ROOT, file), path: match[1]! }));
}

describe('comments', () => {
  it('document every exported name with a doc comment', () => {
    expect(sourceFiles.flatMap(exportedWithoutDoc)).toEqual([]);
    expect(sourceFiles.length).toBeGreaterThan(200);
  });

  it('name only files that exist', () => {
    const named = sourceFiles.flatMap(namedPaths);
    expect(named.filter(({ path }) => !existsSync(join(ROOT, path))).map(({ at, path }) => `${at}: ${path}`)).toEqual([]);
    expect(named.length).toBeGreaterThan(100);
  });

  it(`run no longer than ${MAX_COMMENT_LINES} lines in one block: design is told in docs/`, () => {
    expect(sourceFiles.flatMap(longComments)).toEqual([]);
  });
});
