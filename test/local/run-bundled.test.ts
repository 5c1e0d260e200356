import { execFile } from 'node:child_process';
import { readFileSync, readdirSync, statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const ROOT = join(__dirname, '..', '..');
const CACHE = join(ROOT, 'node_modules', '.cache', 'modelgate-cli');
const run = (...args: string[]) => promisify(execFile)(process.execPath, ['local/run-bundled.cjs', ...args], { cwd: ROOT });
const bundles = () => readdirSync(CACHE).filter((name) => /^ops-cli-[0-9a-f]{16}\.cjs$/.test(name));

/**
 * `npm run ops` and `npm run demo` run their entry from a bundle cached under node_modules/.cache
 * (local/run-bundled.cjs): what a command runs must be the sources as they are now.
 */
describe('the bundle runner of the command-line entry points', () => {
  it('runs the CLI from its bundle, and builds a new one when a source file changes', async () => {
    const first = await run('ops/cli.ts', '--help');
    expect(first.stdout).toContain('npm run ops -- <command>');
    const before = new Set(bundles());
    expect(before.size).toBeGreaterThan(0);

    // A source file touched (now: a time no earlier run gave it): its modification time is part of the bundle's key.
    const source = join(ROOT, 'ops', 'format.ts');
    const { atime, mtime } = statSync(source);
    try {
      utimesSync(source, atime, new Date());
      const second = await run('ops/cli.ts', '--help');
      expect(second.stdout).toBe(first.stdout);
      expect(bundles().filter((name) => !before.has(name))).toHaveLength(1);
    } finally {
      utimesSync(source, atime, mtime);
    }
  });

  it("keeps each file's own folder as __dirname: the seed's data folder is the project's", async () => {
    await run('ops/cli.ts', '--help');
    const newest = bundles()
      .map((name) => join(CACHE, name))
      .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0]!;
    const bundle = readFileSync(newest, 'utf8');
    // local/seed.ts finds data/ from its own folder; in the bundle that folder is written out.
    expect(bundle).toContain('// local/seed.ts');
    expect(bundle).toContain(JSON.stringify(join(ROOT, 'local')));
    expect(bundle).not.toMatch(/\b__dirname\b/);
  });

  it('refuses to run without an entry, saying how to call it', async () => {
    await expect(run()).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('usage: node local/run-bundled.cjs <entry.ts>') });
  });
});
