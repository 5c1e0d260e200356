import type { CommandSpec } from '../command';
import { OperationError } from '../errors';
import { fields, respond } from '../format';

/** `usage roll-up`: the rollup the hourly schedule runs, run by hand. */
export const usageCommands: CommandSpec[] = [
  {
    group: 'usage',
    name: 'roll-up',
    summary: "Record completions whose function died, fold every organization's closed days of usage and rebuild the popularity figures, as the hourly schedule does.",
    description: [
      'A completion whose function died before it ended is recorded first, once no request of its hour',
      'can still run: the most it could cost as usage, and a generation charged that.',
      'A UTC day is closed 30 minutes after it ends. Its usage is folded into one activity row per key,',
      "day, model and endpoint and into each key's running totals, so that no usage view reads history;",
      'the most-popular and top-weekly sorts count the folded days of the last week. Safe to run at any',
      'time, and again: each fold adds a day once.',
    ],
    parse(input) {
      return async (ctx) => {
        if (!ctx.usage) throw new OperationError('this target has no usage table: set USAGE_TABLE (the stack output UsageTableName)');
        const summary = await ctx.usage.rollUp();
        respond(ctx, input, { data: summary }, () => [
          'Rolled up usage.',
          ...fields([
            ['Died completions recorded', String(summary.died)],
            ['Organizations', String(summary.organizations)],
            ['Days folded', String(summary.days)],
            ['Popular models', String(summary.models)],
          ]),
        ]);
      };
    },
  },
];
