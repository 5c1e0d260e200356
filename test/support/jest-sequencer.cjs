// The order jest starts the suites in: the longest of a run on the 2-core machine first, longest
// first, so that none of them starts last and runs on alone while the other workers idle; the
// others follow in jest's own order (longest in its last run first, by file size without one).
// jest's durations alone are not enough: a fresh checkout has none (and a short file that drives
// much, the scale suite, would start late), and the DynamoDB Local pass writes its own (its
// suites run on a JVM at other speeds) into the same record, which the next `npm test` reads.
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
