/**
 * Benchmark of the condition budget (docs/workload-identity.md, "The budget"): what a work unit
 * costs in each function a condition may call, what the most expensive conditions the save-time
 * bound accepts cost when evaluated against the largest tokens an exchange admits, what the meter
 * costs, and how soon it stops a condition over the budget. Run with `npm run bench`.
 *
 * - Calibration: every callable function's worst case, every error and loop
 *   (test/support/condition-probes.ts), list and map literals built, nested and compared, and the
 *   attack's list-literal condition with nested variants
 *   (test/lambdas/federation/condition-literal-probes.ts), timed against their charges:
 *   nanoseconds per work unit, and that against the functions' median (the test holds each
 *   within 4x of it). Fastest of 15 rounds.
 * - Slowest savable: the slowest conditions found that the bound admits
 *   (bench/slowest-conditions.ts), evaluated with the claims of a 16 KB token that make them
 *   slowest: time, and time per unit against the functions' median; token-exchange.bench.ts
 *   times whole exchanges with them, against a plain exchange.
 * - List and map literals: every literal shape of bench/slowest-conditions.ts, in a loop over
 *   `aud` values, over 95 numbers and once, grown to the largest the bound admits: the search
 *   for the slowest literal conditions, ranked by time.
 * - The attack's condition: what the bound says now, and its evaluation as a condition stored
 *   before.
 * - Accepted worst cases: conditions near the bound, each evaluated (metered, as the exchange
 *   does) against three token shapes at the limits; the row is the slowest shape.
 * - Meter overhead: the same conditions in an environment without the meter, in the same run.
 * - Stopped: conditions over the budget (the doubling condition of the attack run among them)
 *   evaluated without the save-time bound, as a condition stored before it would be: time to
 *   the refusal and the heap it grew.
 *
 * Each figure is the median of 15 timed runs after a warm-up.
 */
import { Environment } from '@marcbachmann/cel-js';
import { checkCondition, evaluateConditionMetered } from '../lambdas/federation/condition';
import { ConditionBudgetExceeded, meterCalls, meterEnvironment, metered } from '../lambdas/federation/condition-meter';
import { PROBES, medianRate, timeProbes } from '../test/support/condition-probes';
import { LITERAL_CONDITIONS, LITERAL_PROBES, conditionProbe } from '../test/lambdas/federation/condition-literal-probes';
import { literalConditions, slowestConditions, type SlowCondition } from './slowest-conditions';
import { CONDITION_BUDGET, CONDITION_INPUT_BOUNDS, CONDITION_VARIABLE_TYPES } from '../lambdas/federation/limits';
import type { ConditionVariables } from '../lambdas/federation/types';

const { subjectLength, audienceCount, audienceLength, claimCharacters, scopesCount, scopeLength } = CONDITION_INPUT_BOUNDS;

const INPUTS: Record<string, ConditionVariables> = {
  'long values': {
    subject: 'r'.repeat(subjectLength),
    audience: Array.from({ length: claimCharacters / audienceLength }, (_, i) => String.fromCharCode(97 + (i % 26)).repeat(audienceLength)),
    scopes: Array.from({ length: scopesCount }, () => 's/'.repeat(scopeLength / 2)),
    token_type: 't'.repeat(claimCharacters),
  },
  'many values': {
    subject: 'a/b:'.repeat(subjectLength / 4),
    audience: Array.from({ length: audienceCount }, (_, i) => (i % 3 === 0 ? 'ab' : '')),
    scopes: Array.from({ length: scopesCount }, () => 'x'),
    token_type: '',
  },
  mixed: {
    subject: '/'.repeat(subjectLength),
    audience: [...Array.from({ length: 20 }, () => '/'.repeat(audienceLength)), ...Array.from({ length: audienceCount - 20 }, () => '')],
    scopes: Array.from({ length: scopesCount }, () => 'y'.repeat(scopeLength)),
    token_type: 'x',
  },
};

const ACCEPTED = [
  'audience.exists(a, a.contains("prod"))',
  'audience.all(a, a.startsWith("api://") || a.endsWith(".example") || a == "z")',
  'audience.filter(a, a != "x").filter(a, a != "y").filter(a, a != "z").size() > 0',
  'audience.map(a, a.lowerAscii() + "/").exists(y, y.contains("prod/"))',
  'scopes.map(s, s + s + s + s).map(x, x + x).map(x, x + x).exists_one(y, y.endsWith("q"))',
  'token_type.split("").size() > 3 && token_type.upperAscii().contains("JWT")',
];

const DOUBLING = 'audience.map(a, subject)' + '.map(x, x + x)'.repeat(18) + '.exists(y, y.contains("zzz"))';
const OVER_BUDGET: [string, string, ConditionVariables][] = [
  ['the doubling condition, 64 aud values', DOUBLING, { subject: 'x'.repeat(512), audience: Array.from({ length: 64 }, (_, i) => `aud-${i}`), scopes: [], token_type: '' }],
  ['split and join inside a loop', 'audience.map(a, subject.split("").join(subject)).exists(y, y.contains("zzz"))', INPUTS['many values']!],
  ['ninety cheap stages', 'audience' + '.filter(a, a != "x")'.repeat(30) + '.size() < 0', INPUTS['many values']!],
  ['the attack: list literals in a loop over 4,096 aud values', LITERAL_CONDITIONS[0]!.condition, { ...INPUTS['many values']!, audience: Array.from({ length: audienceCount }, () => '') }],
];
const AUDIENCE = 'https://modelgate.example';

function environment(withMeter: boolean): Environment {
  const env = new Environment({ unlistedVariablesAreDyn: false });
  for (const [name, type] of Object.entries(CONDITION_VARIABLE_TYPES)) env.registerVariable(name, type);
  if (withMeter) meterEnvironment(env);
  return env;
}

const RUNS = 15;

function median(run: () => void, runs = RUNS): number {
  for (let i = 0; i < 3; i++) run();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = process.hrtime.bigint();
    run();
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return times.sort((a, b) => a - b)[Math.floor(runs / 2)]!;
}

const fixed = (value: number, digits = 3) => value.toFixed(digits);
const thousands = (value: number) => Math.round(value).toLocaleString('en-US');

function acceptedRows(): void {
  const plain = environment(false);
  console.log(`\nAccepted conditions against the largest tokens (budget ${thousands(CONDITION_BUDGET.maxWork)} work units, ${thousands(CONDITION_BUDGET.maxBytes)} bytes)`);
  console.log('| condition | bound (work) | measured (work) | metered ms | unmetered ms | meter overhead |');
  console.log('|---|---:|---:|---:|---:|---:|');
  for (const source of ACCEPTED) {
    const { cost } = checkCondition(source);
    let worst = { work: 0, metered: 0, plain: 0 };
    const parsed = plain.parse(source);
    for (const variables of Object.values(INPUTS)) {
      const usage = evaluateConditionMetered(source, variables).usage;
      const meteredMs = median(() => evaluateConditionMetered(source, variables));
      const plainMs = median(() => parsed({ ...variables }));
      if (meteredMs > worst.metered) worst = { work: usage.work, metered: meteredMs, plain: plainMs };
    }
    console.log(`| \`${source}\` | ${thousands(cost.work)} | ${thousands(worst.work)} | ${fixed(worst.metered)} | ${fixed(worst.plain)} | ${fixed(worst.metered / worst.plain, 2)}x |`);
  }
}

/** Every probe timed; returns the functions' median rate, what the others are held against. */
function calibrationRows(): number {
  const timings = timeProbes(RUNS, [...PROBES, ...LITERAL_PROBES, ...LITERAL_CONDITIONS.map(conditionProbe)]);
  const median = medianRate(timings.slice(0, PROBES.length));
  console.log(`\nCalibration: each function's worst case, and list and map literals, against their charges (the functions' median ${fixed(median, 2)} ns per work unit)`);
  console.log('| probe | work units | ms | ns per unit | against the median |');
  console.log('|---|---:|---:|---:|---:|');
  timings.forEach((timing, i) => {
    if (i === PROBES.length) console.log('| *list and map literals* | | | | |');
    if (i === PROBES.length + LITERAL_PROBES.length) console.log('| *literal conditions (the attack first; over the bound with fewer aud values)* | | | | |');
    console.log(`| ${timing.name} | ${thousands(timing.work)} | ${fixed(timing.ms)} | ${fixed(timing.nsPerUnit, 2)} | ${fixed(timing.nsPerUnit / median, 2)}x |`);
  });
  return median;
}

const variablesOf = ({ claims }: SlowCondition): ConditionVariables => ({ subject: claims.sub, audience: claims.aud, scopes: claims.scopes ?? [], token_type: claims.token_type ?? '' });

/** Each condition saved, evaluated as the exchange does: its bound, its work, its time, and its time per unit. */
function timedRows(conditions: readonly SlowCondition[], unitMedian: number): void {
  console.log('| condition | characters | bound (work) | measured (work) | metered ms | ns per unit | against the median |');
  console.log('|---|---:|---:|---:|---:|---:|---:|');
  const rows = conditions.map((entry) => {
    const { cost } = checkCondition(entry.condition);
    const variables = variablesOf(entry);
    const { usage } = evaluateConditionMetered(entry.condition, variables);
    const ms = median(() => evaluateConditionMetered(entry.condition, variables));
    return { name: entry.name, characters: entry.condition.length, bound: cost.work, work: usage.work, ms };
  });
  for (const row of [...rows].sort((a, b) => b.ms - a.ms)) {
    const nsPerUnit = (row.ms * 1e6) / row.work;
    console.log(
      `| ${row.name} | ${row.characters} | ${thousands(row.bound)} | ${thousands(row.work)} | ${fixed(row.ms)} | ${fixed(nsPerUnit, 2)} | ${fixed(nsPerUnit / unitMedian, 2)}x |`,
    );
  }
}

function slowestRows(unitMedian: number): void {
  console.log('\nThe slowest conditions the bound admits, with the 16 KB token that makes each slowest, slowest first');
  timedRows(slowestConditions(AUDIENCE), unitMedian);
}

function literalRows(unitMedian: number): void {
  console.log('\nList and map literals: each shape grown to the largest the bound admits, slowest first');
  timedRows(literalConditions(AUDIENCE), unitMedian);
}

function attackRow(): void {
  const attack = LITERAL_CONDITIONS[0]!.condition;
  let verdict: string;
  try {
    verdict = `saved at ${thousands(checkCondition(attack).cost.work)} work units`;
  } catch (error) {
    verdict = `refused when saved: ${(error as Error).message.replace(/^.*could take /, '').replace(/;.*$/, '')}`;
  }
  console.log(`\nThe attack's condition \`${attack}\`: ${verdict}`);
}

function stoppedRows(): void {
  const unchecked = environment(true);
  console.log('\nConditions over the budget, evaluated without the save-time bound');
  console.log('| condition | stopped after (work) | ms to the refusal | heap grown (MB) |');
  console.log('|---|---:|---:|---:|');
  for (const [name, source, variables] of OVER_BUDGET) {
    const parsed = unchecked.parse(source);
    parsed.check();
    meterCalls(parsed.ast);
    let usage = { work: 0, bytes: 0 };
    const ms = median(() => {
      try {
        metered(() => parsed({ ...variables }));
        throw new Error(`${name} was not stopped`);
      } catch (error) {
        if (!(error instanceof ConditionBudgetExceeded)) throw error;
        usage = error.usage;
      }
    });
    globalThis.gc?.();
    const before = process.memoryUsage().heapUsed;
    try {
      metered(() => parsed({ ...variables }));
    } catch {
      // Stopped, as measured above.
    }
    const grown = (process.memoryUsage().heapUsed - before) / 1024 / 1024;
    console.log(`| ${name} | ${thousands(usage.work)} | ${fixed(ms)} | ${fixed(Math.max(0, grown), 1)} |`);
  }
}

const unitMedian = calibrationRows();
acceptedRows();
slowestRows(unitMedian);
literalRows(unitMedian);
attackRow();
stoppedRows();
