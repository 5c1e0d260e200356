import type { GuardrailIndexRepair } from '../../lambdas/accounts/account-store';
import type { Guardrail } from '../../lambdas/accounts/types';
import { RESET_INTERVALS } from '../../lambdas/accounts/stored-limits';
import type { CommandSpec } from '../command';
import { UsageError } from '../errors';
import { capOrDash, fields, oldestFirst, orDash, plural, respond, table } from '../format';
import { guardrailView, workspaceView } from '../views';

const ORG_ARG = { name: 'org', help: 'organization id' };
const GUARDRAIL_ARG = { name: 'guardrail', help: 'guardrail id' };
/** The service's field names of a guardrail's budget, by the flags that set them. */
const BUDGET_FLAGS = { limit_usd: '--limit-usd', reset_interval: '--reset-interval' };
const BUDGET_OPTIONS = {
  'limit-usd': { type: 'string', value: 'usd', help: 'budget of each key the guardrail covers, in USD, with --reset-interval (docs/limits.md)' },
  'reset-interval': { type: 'string', value: RESET_INTERVALS.join('|'), help: "the budget's window, from UTC midnight (weeks from Monday)" },
} as const;

/** `allow a, b; ignore c`, or `any` when neither list restricts. */
function restriction(allowed: string[] | null, ignored: string[] | null): string {
  const parts = [];
  if (allowed && allowed.length > 0) parts.push(`allow ${allowed.join(', ')}`);
  if (ignored && ignored.length > 0) parts.push(`ignore ${ignored.join(', ')}`);
  return parts.length > 0 ? parts.join('; ') : 'any';
}

/** A guardrail as text output shows it, one field a line. */
export function guardrailFields(guardrail: Guardrail): string[] {
  return fields([
    ['ID', guardrail.id],
    ['Name', guardrail.name],
    ['Description', orDash(guardrail.description)],
    ['Workspace', orDash(guardrail.workspaceId)],
    ['Models', restriction(guardrail.allowedModels, guardrail.ignoredModels)],
    ['Providers', restriction(guardrail.allowedProviders, guardrail.ignoredProviders)],
    ['ZDR only', guardrail.enforceZdr ? 'on' : 'off'],
    ['Budget', capOrDash(guardrail.budget, guardrail.includeByokInBudgets)],
    ['Created', guardrail.createdAt],
    ['Updated', orDash(guardrail.updatedAt)],
  ]);
}

function keyAssignment(assigned: boolean): CommandSpec {
  return {
    group: 'guardrail',
    name: assigned ? 'assign-keys' : 'unassign-keys',
    summary: assigned ? 'Put a guardrail on keys.' : 'Take a guardrail off keys.',
    args: [ORG_ARG, GUARDRAIL_ARG, { name: 'hash', variadic: true, help: 'key hashes, as key list shows them' }],
    parse(input) {
      const organizationId = input.arg('org');
      const guardrailId = input.arg('guardrail');
      const hashes = [...new Set(input.args('hash'))];
      return async (ctx) => {
        const count = assigned
          ? await ctx.accounts.assignGuardrailToKeys(organizationId, guardrailId, hashes)
          : await ctx.accounts.unassignGuardrailFromKeys(organizationId, guardrailId, hashes);
        const unchanged = hashes.length - count;
        const [json, done, already] = assigned
          ? [{ assigned_count: count }, `Assigned guardrail ${guardrailId} to`, 'already had it']
          : [{ unassigned_count: count }, `Unassigned guardrail ${guardrailId} from`, 'did not have it'];
        respond(ctx, input, json, () => [`${done} ${plural(count, 'key')}${unchanged > 0 ? ` (${unchanged} ${already})` : ''}.`]);
      };
    },
  };
}

function workspaceAttachment(attached: boolean): CommandSpec {
  return {
    group: 'guardrail',
    name: attached ? 'attach-workspace' : 'detach-workspace',
    summary: attached
      ? "Attach a guardrail to a workspace, and so to every key acting in it."
      : 'Detach a guardrail from a workspace.',
    args: [ORG_ARG, GUARDRAIL_ARG, { name: 'workspace', help: 'workspace id' }],
    parse(input) {
      const organizationId = input.arg('org');
      const guardrailId = input.arg('guardrail');
      const workspaceId = input.arg('workspace');
      return async (ctx) => {
        const workspace = await ctx.accounts.setWorkspaceGuardrail(organizationId, guardrailId, workspaceId, attached);
        respond(ctx, input, { data: workspaceView(workspace) }, () => [
          attached
            ? `Attached guardrail ${guardrailId} to workspace ${workspace.id}.`
            : `Detached guardrail ${guardrailId} from workspace ${workspace.id}.`,
        ]);
      };
    },
  };
}

/** The `guardrail` commands: guardrails, their budgets, and the keys and workspaces they apply to. */
export const guardrailCommands: CommandSpec[] = [
  {
    group: 'guardrail',
    name: 'create',
    summary: 'Create a guardrail restricting models and providers.',
    description: [
      'A guardrail applies to the keys it is assigned to and to the keys of the workspaces it is attached to. ' +
        'Models are named by id or canonical slug, providers by endpoint tag; nothing may be both allowed and ignored.',
    ],
    args: [ORG_ARG],
    options: {
      name: { type: 'string', required: true, help: 'display name' },
      description: { type: 'string', value: 'text', help: 'free text' },
      'allow-models': { type: 'string', value: 'models', list: true, help: 'only these models' },
      'ignore-models': { type: 'string', value: 'models', list: true, help: 'never these models' },
      'allow-providers': { type: 'string', value: 'providers', list: true, help: 'only these providers' },
      'ignore-providers': { type: 'string', value: 'providers', list: true, help: 'never these providers' },
      zdr: { type: 'boolean', help: 'only zero-data-retention endpoints' },
      workspace: { type: 'string', value: 'id', help: 'the workspace the guardrail belongs to' },
      ...BUDGET_OPTIONS,
      'include-byok': { type: 'boolean', help: 'count bring-your-own-key usage in the budget (stored and shown; no spend here is)' },
    },
    flagsByParameter: BUDGET_FLAGS,
    parse(input) {
      const organizationId = input.arg('org');
      const request = {
        name: input.requiredString('name'),
        description: input.string('description') ?? null,
        workspaceId: input.string('workspace') ?? null,
        allowedModels: input.nonEmptyList('allow-models', 'model') ?? null,
        ignoredModels: input.nonEmptyList('ignore-models', 'model') ?? null,
        allowedProviders: input.nonEmptyList('allow-providers', 'provider') ?? null,
        ignoredProviders: input.nonEmptyList('ignore-providers', 'provider') ?? null,
        enforceZdr: input.flag('zdr'),
        budget: { amount: input.usd('limit-usd'), reset: input.choice('reset-interval', RESET_INTERVALS) },
        ...(input.flag('include-byok') ? { includeByokInBudgets: true } : {}),
      };
      return async (ctx) => {
        const guardrail = await ctx.accounts.createGuardrail(organizationId, request);
        respond(ctx, input, { data: guardrailView(guardrail) }, () => [
          `Created guardrail ${guardrail.id} in organization ${organizationId}.`,
          ...guardrailFields(guardrail),
        ]);
      };
    },
  },
  {
    group: 'guardrail',
    name: 'list',
    summary: "List an organization's guardrails, oldest first.",
    args: [ORG_ARG],
    parse(input) {
      const organizationId = input.arg('org');
      return async (ctx) => {
        await ctx.accounts.getOrganization(organizationId);
        const guardrails = (await ctx.accounts.listGuardrails(organizationId)).sort(oldestFirst);
        respond(ctx, input, { data: guardrails.map(guardrailView) }, () =>
          guardrails.length === 0
            ? ['No guardrails.']
            : table(
                ['ID', 'NAME', 'WORKSPACE', 'MODELS', 'PROVIDERS', 'ZDR'],
                guardrails.map((g) => [
                  g.id,
                  g.name,
                  orDash(g.workspaceId),
                  restriction(g.allowedModels, g.ignoredModels),
                  restriction(g.allowedProviders, g.ignoredProviders),
                  g.enforceZdr ? 'on' : 'off',
                ]),
              ),
        );
      };
    },
  },
  {
    group: 'guardrail',
    name: 'set-budget',
    summary: "Set a guardrail's budget: an amount per window for each key it covers.",
    description: [
      'A budget has both an amount and a reset interval: a new guardrail budget needs both; one that has a budget takes either. ' +
        'A new amount keeps the window; a new interval starts one. guardrail remove-budget removes it.',
    ],
    args: [ORG_ARG, GUARDRAIL_ARG],
    options: {
      ...BUDGET_OPTIONS,
      'include-byok': { type: 'string', value: 'on|off', help: 'count bring-your-own-key usage in the budget (stored and shown only)' },
    },
    flagsByParameter: BUDGET_FLAGS,
    parse(input) {
      const organizationId = input.arg('org');
      const guardrailId = input.arg('guardrail');
      const budget = { amount: input.usd('limit-usd'), reset: input.choice('reset-interval', RESET_INTERVALS) };
      const includeByokInBudgets = input.onOff('include-byok');
      if (budget.amount === undefined && budget.reset === undefined && includeByokInBudgets === undefined) {
        throw new UsageError('nothing to change: give --limit-usd, --reset-interval or --include-byok');
      }
      return async (ctx) => {
        const guardrail = await ctx.accounts.updateGuardrail(organizationId, guardrailId, { budget, includeByokInBudgets });
        respond(ctx, input, { data: guardrailView(guardrail) }, () => [`Set the budget of guardrail ${guardrail.id}: ${capOrDash(guardrail.budget, guardrail.includeByokInBudgets)}.`]);
      };
    },
  },
  {
    group: 'guardrail',
    name: 'remove-budget',
    summary: "Remove a guardrail's budget.",
    args: [ORG_ARG, GUARDRAIL_ARG],
    parse(input) {
      const organizationId = input.arg('org');
      const guardrailId = input.arg('guardrail');
      return async (ctx) => {
        const guardrail = await ctx.accounts.updateGuardrail(organizationId, guardrailId, { budget: { amount: null, reset: null } });
        respond(ctx, input, { data: guardrailView(guardrail) }, () => [`Removed the budget of guardrail ${guardrail.id}.`]);
      };
    },
  },
  {
    group: 'guardrail',
    name: 'index-keys',
    summary: "Bring the guardrail index to the keys' guardrail assignments, of every organization or of those given.",
    description: [
      'Listing a guardrail\'s keys, and deleting a guardrail, read the index that every assignment writes.',
      'An organization created by an earlier release has no index: until this has run, both read every',
      'key of the organization. Enters what the index lacks, removes entries no key holds; safe to run again.',
    ],
    options: { org: { type: 'string', value: 'ids', list: true, help: 'these organizations only (every organization when left out)' } },
    parse(input) {
      const given = input.list('org');
      return async (ctx) => {
        const organizations = given ?? (await ctx.accounts.listOrganizations()).map((organization) => organization.id);
        const repairs: Record<string, GuardrailIndexRepair> = {};
        for (const id of organizations) repairs[id] = await ctx.accounts.indexGuardrailKeys(id);
        const rows = Object.entries(repairs).map(([id, { entered, removed }]) => [id, String(entered), String(removed)]);
        respond(ctx, input, { data: repairs }, () => table(['ORGANIZATION', 'ENTERED', 'REMOVED'], rows, [1, 2]));
      };
    },
  },
  keyAssignment(true),
  keyAssignment(false),
  workspaceAttachment(true),
  workspaceAttachment(false),
  {
    group: 'guardrail',
    name: 'delete',
    summary: 'Delete a guardrail, detaching it from its keys and workspaces.',
    args: [ORG_ARG, { name: 'id', help: 'guardrail id' }],
    parse(input) {
      const organizationId = input.arg('org');
      const id = input.arg('id');
      return async (ctx) => {
        await ctx.accounts.deleteGuardrail(organizationId, id);
        respond(ctx, input, { deleted: true }, () => [`Deleted guardrail ${id}.`]);
      };
    },
  },
];
