import { budgetInterval } from '../../lambdas/accounts/spend-limits';
import type { Workspace } from '../../lambdas/accounts/types';
import { BUDGET_INTERVALS } from '../../lambdas/accounts/stored-limits';
import type { CommandSpec } from '../command';
import { UsageError } from '../errors';
import { fields, listOrDash, oldestFirst, orDash, respond, table } from '../format';
import { workspaceBudgetAnswer, workspaceBudgetsAnswer, workspaceView } from '../views';

const ORG_ARG = { name: 'org', help: 'organization id' };
const WORKSPACE_ARG = { name: 'workspace', help: 'workspace id or slug' };
const INTERVAL_ARG = { name: 'interval', help: `${BUDGET_INTERVALS.join(', ')} (lifetime never resets)` };

/** A workspace as text output shows it, one field a line. */
export function workspaceFields(workspace: Workspace): string[] {
  return fields([
    ['ID', workspace.id],
    ['Name', workspace.name],
    ['Slug', workspace.slug],
    ['Description', orDash(workspace.description)],
    ['Guardrails', listOrDash(workspace.guardrailIds)],
    ['Created', workspace.createdAt],
    ['Updated', orDash(workspace.updatedAt)],
  ]);
}

/** The `workspace` commands: workspaces and their budgets. */
export const workspaceCommands: CommandSpec[] = [
  {
    group: 'workspace',
    name: 'create',
    summary: 'Create a workspace in an organization.',
    description: ['Its slug is derived from the name and must be unique in the organization.'],
    args: [ORG_ARG],
    options: {
      name: { type: 'string', required: true, help: 'display name' },
      description: { type: 'string', value: 'text', help: 'free text' },
    },
    flagsByParameter: { name: '--name' },
    parse(input) {
      const organizationId = input.arg('org');
      const name = input.requiredString('name');
      const description = input.string('description') ?? null;
      return async (ctx) => {
        const workspace = await ctx.accounts.createWorkspace(organizationId, { name, description });
        respond(ctx, input, { data: workspaceView(workspace) }, () => [
          `Created workspace ${workspace.id} in organization ${organizationId}.`,
          ...workspaceFields(workspace),
        ]);
      };
    },
  },
  {
    group: 'workspace',
    name: 'list',
    summary: "List an organization's workspaces, oldest first.",
    args: [ORG_ARG],
    parse(input) {
      const organizationId = input.arg('org');
      return async (ctx) => {
        await ctx.accounts.getOrganization(organizationId);
        const workspaces = (await ctx.accounts.listWorkspaces(organizationId)).sort(oldestFirst);
        respond(ctx, input, { data: workspaces.map(workspaceView) }, () =>
          workspaces.length === 0
            ? ['No workspaces.']
            : table(
                ['ID', 'SLUG', 'NAME', 'GUARDRAILS', 'CREATED'],
                workspaces.map((w) => [w.id, w.slug, w.name, listOrDash(w.guardrailIds), w.createdAt]),
              ),
        );
      };
    },
  },
  {
    group: 'workspace',
    name: 'budget-list',
    summary: "List a workspace's budgets, narrowest interval first.",
    args: [ORG_ARG, WORKSPACE_ARG],
    parse(input) {
      const organizationId = input.arg('org');
      const workspace = input.arg('workspace');
      return async (ctx) => {
        const listed = await ctx.accounts.listWorkspaceBudgets(organizationId, workspace);
        const byok = listed.workspace.includeByokInBudgets ? 'on' : 'off';
        respond(ctx, input, workspaceBudgetsAnswer(listed), () =>
          listed.budgets.length === 0
            ? ['No budgets.', `Include BYOK: ${byok}`]
            : [
                ...table(
                  ['INTERVAL', 'LIMIT USD', 'ID', 'UPDATED'],
                  listed.budgets.map(({ interval, budget }) => [interval, budget.amountUsd, budget.id, budget.updatedAt]),
                  [1],
                ),
                `Include BYOK: ${byok}`,
              ],
        );
      };
    },
  },
  {
    group: 'workspace',
    name: 'budget-put',
    summary: "Set one of a workspace's budgets: a pooled cap on what all of its keys spend in each window.",
    description: [
      'Windows start at UTC midnight (weeks on Monday, months on the 1st); lifetime never resets. ' +
        'A wider interval must keep a larger budget (lifetime > monthly > weekly > daily). ' +
        "A budget that exists keeps its id and window; --include-byok is the workspace's, for every interval.",
    ],
    args: [ORG_ARG, WORKSPACE_ARG, INTERVAL_ARG],
    options: {
      'limit-usd': { type: 'string', value: 'usd', required: true, help: 'the budget in USD, more than 0' },
      'include-byok': { type: 'string', value: 'on|off', help: 'count bring-your-own-key usage in the budgets (stored and shown only)' },
    },
    flagsByParameter: { limit_usd: '--limit-usd', interval: '<interval>' },
    parse(input) {
      const organizationId = input.arg('org');
      const workspace = input.arg('workspace');
      const interval = budgetInterval(input.arg('interval'));
      const limitUsd = input.usd('limit-usd');
      if (limitUsd == null) throw new UsageError('missing --limit-usd');
      const includeByokInBudgets = input.onOff('include-byok');
      return async (ctx) => {
        const set = await ctx.accounts.putWorkspaceBudget(organizationId, workspace, interval, { limitUsd, includeByokInBudgets });
        respond(ctx, input, workspaceBudgetAnswer(set), () => [`Set the ${interval} budget of workspace ${set.workspace.id} to ${set.budget.amountUsd} USD.`]);
      };
    },
  },
  {
    group: 'workspace',
    name: 'budget-delete',
    summary: "Remove one of a workspace's budgets (one it does not have is removed already).",
    args: [ORG_ARG, WORKSPACE_ARG, INTERVAL_ARG],
    flagsByParameter: { interval: '<interval>' },
    parse(input) {
      const organizationId = input.arg('org');
      const workspace = input.arg('workspace');
      const interval = budgetInterval(input.arg('interval'));
      return async (ctx) => {
        await ctx.accounts.deleteWorkspaceBudget(organizationId, workspace, interval);
        respond(ctx, input, { deleted: true }, () => [`Removed the ${interval} budget of workspace ${workspace}.`]);
      };
    },
  },
];
