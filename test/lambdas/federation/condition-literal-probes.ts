import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { ConditionVariables } from '../../../lambdas/federation/types';
import type { Probe, ProbeTiming } from '../../support/condition-probes';

/**
 * List and map literals as probes of the condition budget's calibration, beside the functions'
 * (test/support/condition-probes.ts): built, nested, compared and searched, each at what costs
 * most per unit charged (short strings: a list's weight counts characters, which cost little).
 * And the attack's condition with nested variants, as saved or as stored before the bound
 * refused them.
 */

const variables = (overrides: Partial<ConditionVariables>): ConditionVariables => ({ subject: 'x', audience: [], scopes: [], token_type: 'y', ...overrides });
const times = (n: number, item: (i: number) => string) => Array.from({ length: n }, (_, i) => item(i)).join(', ');
const nested = (depth: number, inner: string) => `${'['.repeat(depth)}${inner}${']'.repeat(depth)}`;
/** Empty aud values: the most loop turns for the fewest characters. */
const emptyAudience = (count: number) => Array.from({ length: count }, () => '');

export const LITERAL_PROBES: readonly Probe[] = [
  { name: 'list literal of 100 variables', expression: `[${times(100, () => 'subject')}] != []`, variables: variables({}) },
  { name: 'list literal of 100 strings', expression: `[${times(100, () => '"s"')}] != []`, variables: variables({}) },
  { name: 'list literal 8 deep', expression: `${nested(8, 'subject')} != []`, variables: variables({}) },
  { name: 'list literal of pairs', expression: '[[subject, subject], [subject, subject], [subject, subject]] != [["x"]]', variables: variables({}) },
  { name: 'list equality 8 deep', expression: `${nested(8, 'subject')} != ${nested(8, 'token_type')}`, variables: variables({}) },
  { name: 'list equality of pairs', expression: `[${times(3, () => '[subject, subject]')}] != [${times(2, () => '[subject, subject]')}, [subject]]`, variables: variables({}) },
  { name: 'list equality of 50 lists', expression: `[${times(50, () => '[subject]')}] != [${times(49, () => '[subject]')}, [token_type]]`, variables: variables({}) },
  { name: 'in (list of lists)', expression: `!([subject, "y"] in [${times(50, () => '[subject, "z"]')}])`, variables: variables({}) },
  { name: 'map literal of 1 entry', expression: '{subject: 1} != {}', variables: variables({}) },
  { name: 'map literal of 20 entries', expression: `{${times(20, (i) => `"k${i}": subject`)}} != {}`, variables: variables({}) },
  { name: 'map literal of 20 int keys', expression: `{${times(20, (i) => `${i}: subject`)}} != {}`, variables: variables({}) },
  { name: 'map equality nested', expression: '{subject: {subject: [subject]}} != {subject: {subject: [token_type]}}', variables: variables({}) },
  { name: 'map equality of 20 entries', expression: `{${times(20, (i) => `"k${i}": subject`)}} == {${times(20, (i) => `"k${i}": subject`)}}`, variables: variables({}) },
  { name: 'map of lists compared', expression: '{subject: [subject, subject]} != {subject: [subject]}', variables: variables({}) },
  { name: 'list of maps compared', expression: '[{subject: subject}, {subject: subject}] != [{subject: token_type}]', variables: variables({}) },
  { name: 'map index', expression: '{subject: 1, token_type: 2}[subject] == 1', variables: variables({}) },
  { name: 'in (map)', expression: 'subject in {subject: 1, token_type: 2}', variables: variables({}) },
];

export interface LiteralCondition {
  name: string;
  condition: string;
  /** The claims that make it slowest: for one the bound refuses, fewer aud values keep its evaluation within the budget. */
  variables: ConditionVariables;
}

/** The attack's condition (saved at 4.08M units, it took 5 to 22 ns a unit) and nested variants. */
export const LITERAL_CONDITIONS: readonly LiteralCondition[] = [
  { name: 'the attack: pairs against one in a loop over aud values', condition: "audience.exists(a, [[a, a], [a, a], [a, a]] == [['x']]) || true", variables: variables({ audience: emptyAudience(1500) }) },
  { name: 'a list 3 deep in a loop over aud values', condition: "audience.exists(a, [[[a]]] == [[['x']]]) || true", variables: variables({ audience: emptyAudience(1500) }) },
  { name: 'a map of lists in a loop over aud values', condition: 'audience.exists(a, {a: [a, a]} == {a: [a]}) || true', variables: variables({ audience: emptyAudience(1500) }) },
  { name: 'a list of maps in a loop over aud values', condition: "audience.exists(a, [{a: a}, {a: a}] == [{a: 'x'}]) || true", variables: variables({ audience: emptyAudience(1500) }) },
  { name: 'a pair in pairs in a loop over aud values', condition: 'audience.exists(a, [a, "y"] in [[a, "z"], [a, "z"], [a, "z"]]) || true', variables: variables({ audience: emptyAudience(1500) }) },
  { name: 'seven pairs compared in a loop over 95 numbers', condition: `[${times(95, String)}].exists(k, [${times(7, () => '[subject, subject]')}] == [${times(6, () => '[subject, subject]')}, [subject, "y"]]) || true`, variables: variables({}) },
  { name: 'a list 20 deep in a loop over 95 numbers', condition: `[${times(95, String)}].exists(k, ${nested(20, 'subject')} == ${nested(20, '"y"')}) || true`, variables: variables({}) },
  { name: 'maps of lists in a loop over scopes', condition: 'scopes.exists(s, [{s: [s]}, {s: [s]}] == [{s: [s]}, {s: ["y"]}]) || true', variables: variables({ scopes: Array.from({ length: 16 }, () => '') }) },
];

/** A condition as a probe: repeated as the probes are, it is timed against its charge as they are. */
export const conditionProbe = ({ name, condition, variables: claims }: LiteralCondition): Probe => ({ name, expression: `(${condition})`, variables: claims });

/**
 * Every probe, the functions' and these, and the conditions above, timed in a process of their
 * own as the functions' are (`timeProbesInProcess`: plain Node, as the service runs).
 */
export async function timeAllProbesInProcess(rounds: number): Promise<ProbeTiming[]> {
  const root = join(__dirname, '..', '..', '..');
  const script = [
    "const { PROBES, timeProbes } = require('./test/support/condition-probes');",
    "const { LITERAL_PROBES, LITERAL_CONDITIONS, conditionProbe } = require('./test/lambdas/federation/condition-literal-probes');",
    `process.stdout.write(JSON.stringify(timeProbes(${rounds}, [...PROBES, ...LITERAL_PROBES, ...LITERAL_CONDITIONS.map(conditionProbe)])));`,
  ].join(' ');
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--require', './local/esm-only-packages.cjs', '-e', script], {
    cwd: root,
    maxBuffer: 16 * 1024 * 1024,
  });
  return JSON.parse(stdout) as ProbeTiming[];
}
