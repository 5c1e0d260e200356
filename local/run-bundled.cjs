// Runs one of the project's command-line entry points (`npm run ops`, `npm run demo`) from an
// esbuild bundle of its TypeScript, built into node_modules/.cache/modelgate-cli/ the first time
// and again whenever a source file under lambdas/, local/ or ops/ changes (by path, size and
// modification time). A command then loads one file instead of compiling and resolving hundreds:
// about half the time tsx takes to compile it (docs/benchmarks.md, "Operator commands").
// Packages stay in node_modules, loaded as they would be; `__dirname` keeps each file's own folder.
//
// Usage: node local/run-bundled.cjs <entry.ts> [arguments...]
'use strict';
const { createHash } = require('node:crypto');
const { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync } = require('node:fs');
const { dirname, join, relative, resolve } = require('node:path');

const ROOT = resolve(__dirname, '..');
const SOURCE_FOLDERS = ['lambdas', 'local', 'ops'];
const CACHE = join(ROOT, 'node_modules', '.cache', 'modelgate-cli');

// @middy/* export only an "import" condition: resolved here to their entry file, as under tsx.
require('./esm-only-packages.cjs');
// Node.js 22.1 and later keep the bundle's compiled code beside it, a tenth of a second a command.
require('node:module').enableCompileCache?.(join(CACHE, 'compiled'));

/** Every source file's path, size and modification time, with the entry and esbuild's version. */
function sourcesKey(entry) {
  const hash = createHash('sha256').update(entry).update(require('esbuild/package.json').version);
  const walk = (folder) => {
    for (const dirent of readdirSync(folder, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(folder, dirent.name);
      if (dirent.isDirectory()) walk(path);
      else if (/\.(ts|cjs|mjs|js|json)$/.test(dirent.name)) {
        const stat = statSync(path);
        hash.update(`${relative(ROOT, path)}\0${stat.size}\0${stat.mtimeMs}\n`);
      }
    }
  };
  for (const folder of SOURCE_FOLDERS) walk(join(ROOT, folder));
  return hash.digest('hex').slice(0, 16);
}

/** esbuild does not rewrite `__dirname`: each file's is put in as its own folder, as a string. */
const ownFolder = {
  name: 'own-folder',
  setup(build) {
    build.onLoad({ filter: /\.ts$/ }, (args) => {
      const source = readFileSync(args.path, 'utf8');
      return { contents: source.replace(/\b__dirname\b/g, JSON.stringify(dirname(args.path))), loader: 'ts' };
    });
  },
};

async function bundleOf(entry) {
  const name = entry.replace(/\.ts$/, '').replace(/[^a-z0-9]+/gi, '-');
  const file = join(CACHE, `${name}-${sourcesKey(entry)}.cjs`);
  if (existsSync(file)) return file;
  mkdirSync(CACHE, { recursive: true });
  // Written whole, then renamed: commands started together never load a half-written bundle.
  const partial = `${file}.${process.pid}.tmp`;
  await require('esbuild').build({
    entryPoints: [join(ROOT, entry)],
    outfile: partial,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: `node${process.versions.node.split('.')[0]}`,
    packages: 'external',
    sourcemap: 'inline',
    logLevel: 'error',
    plugins: [ownFolder],
  });
  renameSync(partial, file);
  pruneOlder(name, file);
  return file;
}

/** An hour after a newer bundle of the same entry was built, older ones go: no command still loads them. */
function pruneOlder(name, kept) {
  for (const other of readdirSync(CACHE)) {
    const path = join(CACHE, other);
    if (path === kept || !other.startsWith(`${name}-`)) continue;
    try {
      if (Date.now() - statSync(path).mtimeMs > 3_600_000) rmSync(path, { force: true });
    } catch {
      // Another command pruned it first.
    }
  }
}

const [entry, ...args] = process.argv.slice(2);
if (!entry) {
  process.stderr.write('usage: node local/run-bundled.cjs <entry.ts> [arguments...]\n');
  process.exit(2);
}
bundleOf(entry).then(
  (file) => {
    process.argv = [process.argv[0], join(ROOT, entry), ...args];
    process.setSourceMapsEnabled(true);
    require(file);
  },
  (error) => {
    process.stderr.write(`error: ${entry} could not be bundled: ${error.message}\n`);
    process.exitCode = 1;
  },
);
