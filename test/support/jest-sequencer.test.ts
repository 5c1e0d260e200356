import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

const LongestFirst = require('./jest-sequencer.cjs') as new (options: object) => {
  sort(tests: FakeTest[]): FakeTest[];
  time(test: FakeTest): number | undefined;
};

const ROOT = join(__dirname, '..', '..');

interface FakeTest {
  path: string;
  duration?: number;
  context: { config: { rootDir: string; cache: boolean }; hasteFS: { getSize(path: string): number } };
}

/** Test files as jest hands them to its sequencer, with their sizes in bytes, under `rootDir`. */
function tests(files: Record<string, number>, rootDir = ROOT): FakeTest[] {
  const context = { config: { rootDir, cache: false }, hasteFS: { getSize: (path: string) => files[relative(rootDir, path)] ?? 0 } };
  return Object.keys(files).map((file) => ({ path: join(rootDir, file), context }));
}

const order = (sorted: FakeTest[]) => sorted.map((test) => relative(ROOT, test.path));

describe('the order suites start in', () => {
  const files = { 'test/lambdas/counts.test.ts': 90_000, 'test/local/scale.test.ts': 5_000, 'test/docs/runnable-blocks.test.ts': 4_000, 'test/layers.test.ts': 20_000 };

  it('starts the longest suites first where jest has no durations, however small their files, then the rest by size', () => {
    expect(order(new LongestFirst({}).sort(tests(files)))).toEqual(['test/docs/runnable-blocks.test.ts', 'test/local/scale.test.ts', 'test/lambdas/counts.test.ts', 'test/layers.test.ts']);
  });

  it("starts them first where jest's durations say otherwise (another pass wrote them), then the rest in jest's order", () => {
    const sequencer = new LongestFirst({});
    const durations: Record<string, number> = { 'test/lambdas/counts.test.ts': 30_000, 'test/local/scale.test.ts': 2_000, 'test/docs/runnable-blocks.test.ts': 10_000, 'test/layers.test.ts': 500 };
    sequencer.time = (test) => durations[relative(ROOT, test.path)];
    expect(order(sequencer.sort(tests(files)))).toEqual(['test/docs/runnable-blocks.test.ts', 'test/local/scale.test.ts', 'test/lambdas/counts.test.ts', 'test/layers.test.ts']);
  });

  it('fails where a suite it names is gone, rather than order by a stale list', () => {
    const elsewhere = mkdtempSync(join(tmpdir(), 'modelgate-sequencer-'));
    try {
      expect(() => new LongestFirst({}).sort(tests({ 'test/a.test.ts': 1 }, elsewhere))).toThrow(/names test\/docs\/runnable-blocks\.test\.ts, which is gone/);
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });
});
