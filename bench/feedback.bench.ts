/**
 * How fast one test file answers (`npm run bench`): `npx jest <one unit test file>` as a
 * maintainer runs it, timed as a whole process (median of 5), against the aim of 5 s and
 * against jest's own start (`jest --listTests` of the same file: no test runs); and which tests
 * `jest --findRelatedTests <source>` finds for a source file; and how long an operator command
 * takes to start, from its cached bundle (local/run-bundled.cjs) and compiled by tsx as it loads;
 * and what a suite on the local runtime costs in jest's own context and in the plain one the
 * suites run in (test/support/jest-environment.cjs).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vm from 'node:vm';

const ROOT = join(__dirname, '..');
const JEST = join(ROOT, 'node_modules', '.bin', 'jest');
const RUNS = 5;
const AIM_SECONDS = 5;
/** Unit test files of three kinds: pure functions, the embedded DynamoDB, the architecture rules. */
const FILES = ['test/lambdas/catalog/pricing-effective.test.ts', 'test/lambdas/aws/dynamo-items.test.ts', 'test/layers.test.ts'];
const SOURCES = ['lambdas/catalog/pricing.ts', 'lambdas/spending/spending-gate.ts', 'lambdas/http/dispatcher.ts'];

/** One command as a whole process: how long it took and what it printed; a failure throws. */
function timed(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): { seconds: number; stdout: string } {
  const started = process.hrtime.bigint();
  const run = spawnSync(command, args, { cwd: ROOT, encoding: 'utf8', env });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (run.status !== 0) throw new Error(`${command} ${args.join(' ')} failed:\n${run.stderr}`);
  return { seconds, stdout: run.stdout };
}

function jest(args: string[]): { seconds: number; stdout: string } {
  return timed(JEST, args, { ...process.env, CI: 'true' });
}

/**
 * The CPU seconds this process's waited-for children used so far (Linux: `cutime` and `cstime`
 * of /proc/self/stat, in clock ticks of 1/100 s); undefined elsewhere.
 */
function childrenCpuSeconds(): number | undefined {
  try {
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return undefined;
  }
}

/** A suite on the local runtime, `runs` times in each environment, interleaved: median wall and CPU seconds. */
function contexts(file: string, runs: number): void {
  const environments = [
    { name: "jest's (a proxied global)", args: ['--testEnvironment=node'] },
    { name: 'the suites\' (a plain context)', args: [] },
  ];
  const measured = environments.map(() => ({ wall: [] as number[], cpu: [] as number[] }));
  for (let run = 0; run < runs; run++) {
    environments.forEach(({ args }, i) => {
      const before = childrenCpuSeconds();
      measured[i]!.wall.push(jest([...args, file]).seconds);
      const after = childrenCpuSeconds();
      if (before !== undefined && after !== undefined) measured[i]!.cpu.push(after - before);
    });
  }
  const plainContexts = 'DONT_CONTEXTIFY' in vm.constants;
  console.log(`
A suite on the local runtime (\`${file}\`) in each test context, median of ${runs}${plainContexts ? '' : ' (this Node.js has no plain context: both are the same)'}`);
  console.log('| context | run | CPU | CPU / proxied |');
  console.log('|---|---|---|---|');
  const proxiedCpu = median(measured[0]!.cpu);
  environments.forEach(({ name }, i) => {
    const cpu = measured[i]!.cpu.length ? median(measured[i]!.cpu) : undefined;
    console.log(`| ${name} | ${median(measured[i]!.wall).toFixed(2)} s | ${cpu === undefined ? 'n/a' : `${cpu.toFixed(2)} s`} | ${cpu === undefined ? 'n/a' : (cpu / proxiedCpu).toFixed(2)} |`);
  });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function main(): void {
  console.log(`One test file, as \`npx jest <file>\` runs it: median of ${RUNS} runs, aim ${AIM_SECONDS} s`);
  console.log('| file | run | jest start alone | run / aim |');
  console.log('|---|---|---|---|');
  for (const file of FILES) {
    const start = median(Array.from({ length: RUNS }, () => jest(['--listTests', file]).seconds));
    const run = median(Array.from({ length: RUNS }, () => jest([file]).seconds));
    console.log(`| ${file} | ${run.toFixed(2)} s | ${start.toFixed(2)} s | ${(run / AIM_SECONDS).toFixed(2)} |`);
  }
  console.log('\n`jest --findRelatedTests <source>`: the test files that import it');
  console.log('| source | test files found |');
  console.log('|---|---|');
  for (const source of SOURCES) {
    const found = jest(['--listTests', '--findRelatedTests', source]).stdout.split('\n').filter((line) => line.endsWith('.test.ts'));
    console.log(`| ${source} | ${found.length} |`);
  }
  // `org list --help` loads every module of the CLI and its target, and needs no running service.
  const args = ['ops/cli.ts', 'org', 'list', '--help'];
  timed(process.execPath, ['local/run-bundled.cjs', ...args]);
  const bundled = median(Array.from({ length: RUNS }, () => timed(process.execPath, ['local/run-bundled.cjs', ...args]).seconds));
  const compiled = median(Array.from({ length: RUNS }, () => timed(process.execPath, ['--import', 'tsx', '--require', './local/esm-only-packages.cjs', ...args]).seconds));
  console.log(`\nAn operator command (\`${args.join(' ')}\`), median of ${RUNS}`);
  console.log('| from the cached bundle | compiled by tsx | bundle / tsx |');
  console.log('|---|---|---|');
  console.log(`| ${bundled.toFixed(2)} s | ${compiled.toFixed(2)} s | ${(bundled / compiled).toFixed(2)} |`);
  contexts('test/lambdas/catalog/catalog-api.test.ts', 3);
}

main();
