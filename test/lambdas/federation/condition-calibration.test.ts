import { CALLABLE_FUNCTIONS } from '../../../lambdas/federation/condition-functions';
import { PROBES, medianRate, timeProbesInProcess, type ProbeTiming } from '../../support/condition-probes';

/**
 * The condition budget is one number of work units, so a work unit must cost about the same
 * time whatever spends it: a function charged below its real cost lets a condition within the
 * budget take far longer than the budget means (`lastIndexOf` once took 300 times its charge).
 * Every callable function's worst case, and every error and loop, is timed against its charge
 * (test/support/condition-probes.ts), and none may cost more than {@link FACTOR} times the
 * median probe per unit.
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

  it(`charges every function and error so that no work unit costs more than ${FACTOR} times the median`, async () => {
    const over = (timings: readonly ProbeTiming[]) => {
      const median = medianRate(timings);
      return timings.filter((timing) => timing.nsPerUnit > FACTOR * median).map((timing) => `${timing.name}: ${(timing.nsPerUnit / median).toFixed(1)}x the median`);
    };
    const first = over(await timeProbesInProcess(ROUNDS));
    // Only what is over the factor twice, in two runs, is charged too little.
    const confirmed = first.length === 0 ? [] : over(await timeProbesInProcess(ROUNDS)).filter((line) => first.some((seen) => seen.split(':')[0] === line.split(':')[0]));
    expect(confirmed).toEqual([]);
  });
});
