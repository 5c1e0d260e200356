import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Environment } from '@marcbachmann/cel-js';
import { ConditionBudgetExceeded, meterCalls, meterEnvironment, metered } from '../../lambdas/federation/condition-meter';
import { CONDITION_INPUT_BOUNDS, CONDITION_VARIABLE_TYPES } from '../../lambdas/federation/limits';
import type { ConditionVariables } from '../../lambdas/federation/types';

/**
 * The worst case of every function a condition may call, and of the other costly things an
 * evaluation does (errors, loops, list operators), as probes for the condition budget's
 * calibration: each probe runs its case, repeated until it is worth timing, under the real meter,
 * and reports its time per work unit charged. The test (condition-calibration.test.ts) holds
 * every probe's rate within a factor of the others'; the bench prints them.
 */

const { subjectLength, audienceCount, audienceLength, claimCharacters } = CONDITION_INPUT_BOUNDS;

const variables = (overrides: Partial<ConditionVariables>): ConditionVariables => ({ subject: '', audience: [], scopes: [], token_type: '', ...overrides });
/** The needle V8's string search is slowest with in a text of one letter: a different letter in its middle. */
const middleNeedle = 'a'.repeat(subjectLength / 2) + 'b' + 'a'.repeat(subjectLength / 2 - 1);
const letters = 'a'.repeat(claimCharacters);
/** Source text before the probed expression: an error's message quotes the source up to the failing node. */
const longPrefix = `"${'x'.repeat(1800)}" != "" && `;

export interface Probe {
  /** What the probe exercises, e.g. `lastIndexOf`. */
  name: string;
  /** The expression repeated, with `i` bound to the repetition. */
  expression: string;
  variables: ConditionVariables;
  /** Text put before the repetition in the source (see {@link longPrefix}). */
  prefix?: string;
}

export const PROBES: readonly Probe[] = [
  { name: 'a loop step', expression: 'audience.all(a, a != "x") || i < 0', variables: variables({ audience: Array.from({ length: audienceCount }, () => '') }) },
  { name: 'size (string)', expression: 'token_type.size() > 0', variables: variables({ token_type: '😀'.repeat(claimCharacters / 2) }) },
  { name: 'size (list)', expression: 'size(audience) > 0', variables: variables({ audience: Array.from({ length: audienceCount }, () => '') }) },
  { name: 'contains', expression: 'token_type.contains(subject)', variables: variables({ token_type: letters, subject: middleNeedle }) },
  { name: 'indexOf', expression: 'token_type.indexOf(subject) < 0', variables: variables({ token_type: letters, subject: middleNeedle }) },
  { name: 'indexOf (from)', expression: 'token_type.indexOf(subject, 1) < 0', variables: variables({ token_type: letters, subject: middleNeedle }) },
  { name: 'lastIndexOf', expression: 'token_type.lastIndexOf(subject) < 0', variables: variables({ token_type: letters, subject: `${'a'.repeat(subjectLength - 1)}b` }) },
  {
    name: 'lastIndexOf (from)',
    expression: 'token_type.lastIndexOf(subject, 12287) < 0',
    variables: variables({ token_type: letters, subject: `${'a'.repeat(subjectLength - 1)}b` }),
  },
  { name: 'startsWith', expression: 'token_type.startsWith(subject)', variables: variables({ token_type: letters, subject: 'a'.repeat(subjectLength) }) },
  { name: 'endsWith', expression: 'token_type.endsWith(subject)', variables: variables({ token_type: letters, subject: 'a'.repeat(subjectLength) }) },
  { name: 'upperAscii', expression: 'token_type.upperAscii() != ""', variables: variables({ token_type: 'ﬃ'.repeat(claimCharacters) }) },
  { name: 'lowerAscii', expression: 'token_type.lowerAscii() != ""', variables: variables({ token_type: 'İ'.repeat(claimCharacters) }) },
  { name: 'trim', expression: 'token_type.trim() == ""', variables: variables({ token_type: ' '.repeat(claimCharacters) }) },
  { name: 'substring', expression: 'token_type.substring(1) != ""', variables: variables({ token_type: letters }) },
  { name: 'split (empty separator)', expression: 'token_type.split("").size() > 0', variables: variables({ token_type: '😀'.repeat(claimCharacters / 2) }) },
  { name: 'split (one letter)', expression: 'token_type.split("a").size() > 0', variables: variables({ token_type: letters }) },
  { name: 'split (long separator)', expression: 'token_type.split(subject).size() > 0', variables: variables({ token_type: letters, subject: middleNeedle }) },
  { name: 'join', expression: 'audience.join(",") != ""', variables: variables({ audience: Array.from({ length: audienceCount }, () => 'xyz') }) },
  { name: 'int', expression: 'int(token_type) == 1 || true', variables: variables({ token_type: `${' '.repeat(claimCharacters - 1)}1` }) },
  { name: 'uint', expression: 'uint(token_type) == 1u || true', variables: variables({ token_type: `${' '.repeat(claimCharacters - 1)}1` }) },
  { name: 'double', expression: 'double(token_type) == 1.0 || true', variables: variables({ token_type: 'İ'.repeat(claimCharacters) }) },
  { name: 'bool', expression: 'bool(subject) || true', variables: variables({ subject: 'x' }) },
  { name: 'string', expression: 'string(i) != ""', variables: variables({}) },
  { name: 'an error (conversion)', expression: 'int(subject) == 1 || true', variables: variables({ subject: 'x' }), prefix: longPrefix },
  { name: 'an error (index)', expression: 'subject.split("/")[2] == "x" || true', variables: variables({ subject: 'a' }), prefix: longPrefix },
  { name: 'an error (substring)', expression: 'subject.substring(5) == "x" || true', variables: variables({ subject: 'a' }), prefix: longPrefix },
  { name: 'errors in a loop', expression: 'audience.exists(a, int(a) == 1) || true', variables: variables({ audience: Array.from({ length: 64 }, () => 'ab') }), prefix: longPrefix },
  { name: 'in (list)', expression: '!(token_type in audience)', variables: variables({ token_type: 'q', audience: Array.from({ length: audienceCount }, () => 'abc') }) },
  { name: 'list equality', expression: 'audience == scopes', variables: variables({ audience: Array.from({ length: audienceCount }, () => 'abc'), scopes: Array.from({ length: 16 }, () => 'abc') }) },
  { name: 'string comparison', expression: 'token_type < subject', variables: variables({ token_type: letters, subject: `${letters.slice(0, -1)}b` }) },
  { name: 'map of a list', expression: 'audience.map(a, a + "/").size() > 0', variables: variables({ audience: Array.from({ length: claimCharacters / audienceLength }, () => 'a'.repeat(audienceLength)) }) },
];

/** How much work one timed evaluation of a probe aims at: enough to time, within the budget. */
const TARGET_WORK = 2_000_000;
/** The engine's default cap on a list literal: the most repetitions one source can ask for. */
const MAX_REPETITIONS = 1000;

export interface ProbeTiming {
  name: string;
  source: string;
  /** Work units the meter charged for one evaluation. */
  work: number;
  /** The fastest evaluation seen, in milliseconds. */
  ms: number;
  /** Nanoseconds per work unit: `ms` over `work`. */
  nsPerUnit: number;
}

/** An environment as the service's, metered, without the save-time bound (a probe may be over it). */
function probeEnvironment(): Environment {
  const environment = new Environment({ unlistedVariablesAreDyn: false });
  for (const [name, type] of Object.entries(CONDITION_VARIABLE_TYPES)) environment.registerVariable(name, type);
  meterEnvironment(environment);
  return environment;
}

type Compiled = (variables: ConditionVariables) => unknown;

function compile(environment: Environment, source: string): Compiled {
  const parsed = environment.parse(source);
  const checked = parsed.check();
  if (!checked.valid) throw new Error(`probe ${source.slice(0, 80)} does not check: ${String(checked.error)}`);
  meterCalls(parsed.ast);
  return parsed as unknown as Compiled;
}

/**
 * One metered evaluation: its work. Without the wall-clock backstop: a garbage collection
 * pause in one round must not stop a probe, and the fastest round is the one kept.
 */
function run(compiled: Compiled, variables: ConditionVariables): number {
  try {
    return metered(() => compiled({ ...variables }), { timeLimitMs: Infinity }).usage.work;
  } catch (error) {
    if (error instanceof ConditionBudgetExceeded) throw new Error(`a probe must stay within the budget, or what it times stops early (${error.limit}, ${error.usage.work} units)`);
    throw error;
  }
}

const repeated = (probe: Probe, times: number) =>
  `${probe.prefix ?? ''}[${Array.from({ length: times }, (_, i) => i).join(', ')}].all(i, ${probe.expression} || i < 0)`;

/**
 * Times every probe `rounds` times, one probe after the other in each round so that a machine
 * busy with something else slows them alike, and keeps each probe's fastest run: load only ever
 * adds time.
 */
export function timeProbes(rounds: number, probes: readonly Probe[] = PROBES): ProbeTiming[] {
  const environment = probeEnvironment();
  const prepared = probes.map((probe) => {
    const once = run(compile(environment, repeated(probe, 1)), probe.variables);
    const times = Math.max(1, Math.min(MAX_REPETITIONS, Math.floor(TARGET_WORK / once)));
    const source = repeated(probe, times);
    const compiled = compile(environment, source);
    return { probe, source, compiled, work: run(compiled, probe.variables), best: Infinity };
  });
  for (let round = 0; round < rounds; round++) {
    for (const entry of prepared) {
      const started = process.hrtime.bigint();
      run(entry.compiled, entry.probe.variables);
      entry.best = Math.min(entry.best, Number(process.hrtime.bigint() - started));
    }
  }
  return prepared.map(({ probe, source, work, best }) => ({ name: probe.name, source, work, ms: best / 1e6, nsPerUnit: best / work }));
}

/** The median of the probes' rates: what a work unit costs on this machine, now. */
export function medianRate(timings: readonly ProbeTiming[]): number {
  const rates = timings.map((timing) => timing.nsPerUnit).sort((a, b) => a - b);
  const middle = Math.floor(rates.length / 2);
  return rates.length % 2 === 1 ? rates[middle]! : (rates[middle - 1]! + rates[middle]!) / 2;
}

/**
 * {@link timeProbes} in a process of its own, plain Node as the service runs: a test runner's
 * sandbox (jest runs each suite in a `vm` context) slows the engine's own steps several times
 * more than the string functions it calls, which is not what a function sees.
 */
export async function timeProbesInProcess(rounds: number): Promise<ProbeTiming[]> {
  const root = join(__dirname, '..', '..');
  const script = `const { timeProbes } = require('./test/support/condition-probes'); process.stdout.write(JSON.stringify(timeProbes(${rounds})));`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--require', './local/esm-only-packages.cjs', '-e', script], {
    cwd: root,
    maxBuffer: 16 * 1024 * 1024,
  });
  return JSON.parse(stdout) as ProbeTiming[];
}
