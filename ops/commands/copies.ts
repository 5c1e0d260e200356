import { needsRepair, type CopiesReport } from '../../lambdas/aws/dynamo-copies-audit';
import type { CommandSpec, OpsContext } from '../command';
import { OperationError } from '../errors';
import { respond, table } from '../format';

function auditOf(ctx: OpsContext) {
  if (!ctx.copies) throw new OperationError('this target has no read copies to check');
  return ctx.copies;
}

function reportTable(report: CopiesReport, repaired: boolean): string[] {
  const header = ['KIND', 'ITEMS', 'MISSING', 'BEHIND', 'ORPHANED', ...(repaired ? ['REPAIRED'] : [])];
  const rows = Object.entries(report).map(([kind, count]) => [
    kind,
    ...[count.items, count.missing, count.behind, count.orphaned, ...(repaired ? [count.repaired] : [])].map(String),
  ]);
  return table(header, rows, [1, 2, 3, 4, 5]);
}

const DESCRIPTION = [
  'Every request reads a key, its organization, workspace and guardrails from one of their copies;',
  'every change writes an item and all of its copies in one transaction. Items written by a release',
  'before copies have none, and a rollback to such a release leaves copies behind their items:',
  'MISSING and BEHIND count those copies, ORPHANED the copies still readable whose item is gone.',
];

/** `copies check` and `copies repair`: the read copies of keys, organizations, workspaces and guardrails against their items. */
export const copiesCommands: CommandSpec[] = [
  {
    group: 'copies',
    name: 'check',
    summary: 'Compare every copied item with its read copies; exit status 1 when any are missing or behind.',
    description: [...DESCRIPTION, 'Nothing is written: `copies repair` writes what this finds.'],
    parse(input) {
      return async (ctx) => {
        const report = await auditOf(ctx).check();
        respond(ctx, input, { data: report, consistent: !needsRepair(report) }, () => [
          ...reportTable(report, false),
          needsRepair(report) ? 'Some copies disagree with their items: run copies repair.' : 'Every copy agrees with its item.',
        ]);
        if (needsRepair(report)) throw new OperationError('copies are missing, behind or orphaned');
      };
    },
  },
  {
    group: 'copies',
    name: 'repair',
    summary: "Write the copies of every item whose copies are missing or behind, and mark orphans' copies deleted.",
    description: [
      ...DESCRIPTION,
      'Each item is repaired as a change writes it: its copies in one transaction with a check that the',
      'item is still at the revision read; an orphan on condition that its item still does not exist.',
      'Safe to run while the service serves requests, and to run again.',
    ],
    parse(input) {
      return async (ctx) => {
        const report = await auditOf(ctx).repair();
        const repaired = Object.values(report).reduce((sum, count) => sum + count.repaired, 0);
        respond(ctx, input, { data: report }, () => [...reportTable(report, true), repaired === 0 ? 'Nothing to repair.' : `Repaired the copies of ${repaired} item${repaired === 1 ? '' : 's'}.`]);
      };
    },
  },
];
