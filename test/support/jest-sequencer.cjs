// The order jest starts the suites in. jest starts the suites that took longest in its last run
// first, so that no long suite starts last and runs on alone while the other workers idle. A
// fresh checkout has no last run: jest would order by file size, and a short file that drives
// much (the scale suite) could start last. There, the suites below, the longest of a run on the
// 2-core machine, start first, longest first; the others follow in jest's order.
'use strict';
const { existsSync } = require('node:fs');
const { join, relative } = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;

const LONGEST = [
  'test/docs/runnable-blocks.test.ts',
  'test/lambdas/aws/atomic-changes.test.ts',
  'test/local/scale.test.ts',
  'test/lambdas/inference/spending-limits.test.ts',
  'test/local/stream-cut-short.test.ts',
  'test/lambdas/functions/bundled-end-to-end.test.ts',
  'test/lambdas/functions/bundled-gateway.test.ts',
  'test/lib/deploy-environments.test.ts',
  'test/lambdas/aws/dynamo-usage-fold.test.ts',
  'test/lambdas/management/parallel-writers.test.ts',
  'test/lambdas/management/concurrent-writes.test.ts',
  'test/lambdas/functions/bundled-embedded-instance.test.ts',
];

class LongestFirst extends Sequencer {
  sort(tests) {
    const sorted = super.sort(tests);
    // jest has this checkout's durations: its order stands.
    if (sorted.some((test) => test.duration != null)) return sorted;
    const rootDir = tests[0]?.context.config.rootDir;
    for (const path of LONGEST) if (rootDir && !existsSync(join(rootDir, path))) throw new Error(`test/support/jest-sequencer.cjs names ${path}, which is gone`);
    const rank = (test) => {
      const at = LONGEST.indexOf(relative(test.context.config.rootDir, test.path));
      return at === -1 ? LONGEST.length : at;
    };
    return [...sorted].sort((a, b) => rank(a) - rank(b));
  }
}

module.exports = LongestFirst;
