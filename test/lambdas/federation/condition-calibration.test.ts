import { checkCondition } from '../../../lambdas/federation/condition';
import { CALLABLE_FUNCTIONS } from '../../../lambdas/federation/condition-functions';
import { PROBES, medianRate, type ProbeTiming } from '../../support/condition-probes';
import { LITERAL_CONDITIONS, LITERAL_PROBES, timeAllProbesInProcess } from './condition-literal-probes';

/**
 * The condition budget is one number of work units, so a work unit must cost about the same
 * time whatever spends it: a function charged below its real cost lets a condition within the
 * budget take far longer than the budget means (`lastIndexOf` once took 300 times its charge, and
 * a loop building `[[a, a], [a, a], [a, a]]` 5 to 30 times its charge). Every callable function's
 * worst case, every error and loop (test/support/condition-probes.ts), and list and map literals
 * built, nested and compared (condition-literal-probes.ts) are timed against their charges, and
 * none may cost more than {@link FACTOR} times the functions' median probe per unit.
 *
 * Timing on a shared machine: the probes run in plain Node, as the service does, one after
 * another in each round, so load slows them alike; each keeps its fastest round (load only adds
 * time); and a probe over the factor is timed again, with all the others, before the test fails.
 */
const FACTOR = 4;
const ROUNDS = 12;

describe('the condition budget, calibrated', () => {
  it('has a probe for every function a condition may call', () => {
    const probed = new Set(PROBES.map((probe) => probe.name.split(' ')[0]));
    expect(CALLABLE_FUNCTIONS.filter((name) => !probed.has(name))).toEqual([]);
  });

  it("refuses the attack's list literals in a loop over aud values when a policy is saved", () => {
    const inLoopOverAudience = LITERAL_CONDITIONS.filter(({ condition }) => condition.startsWith('audience.exists'));
    expect(inLoopOverAudience.length).toBeGreaterThanOrEqual(5);
    for (const { condition } of inLoopOverAudience) expect(() => checkCondition(condition)).toThrow(/too expensive/);
  });

  it('saves the smaller literal conditions, which the timing below holds to the band', () => {
    const saved = LITERAL_CONDITIONS.filter(({ condition }) => !condition.startsWith('audience.exists'));
    for (const { condition } of saved) expect(() => checkCondition(condition)).not.toThrow();
  });

  it(`charges every function, error, list and map literal and literal condition so that no work unit costs more than ${FACTOR} times the median`, async () => {
    const functions = new Set(PROBES.map((probe) => probe.name));
    const over = (timings: readonly ProbeTiming[]) => {
      expect(timings).toHaveLength(PROBES.length + LITERAL_PROBES.length + LITERAL_CONDITIONS.length);
      const median = medianRate(timings.filter((timing) => functions.has(timing.name)));
      return timings.filter((timing) => timing.nsPerUnit > FACTOR * median).map((timing) => `${timing.name}: ${(timing.nsPerUnit / median).toFixed(1)}x the median`);
    };
    const first = over(await timeAllProbesInProcess(ROUNDS));
    // Only what is over the factor twice, in two runs, is charged too little.
    const confirmed = first.length === 0 ? [] : over(await timeAllProbesInProcess(ROUNDS)).filter((line) => first.some((seen) => seen.split(':')[0] === line.split(':')[0]));
    expect(confirmed).toEqual([]);
  });
});
