import { pathId } from '../../ids';
import { pageOf, windowOf } from '../list-page';
import type { GUARDRAIL_ROUTES, KEY_ASSIGNMENT_ROUTES } from '../routes/guardrails';
import { orgOf, type Operations } from '../operation';
import { guardrailView, keyAssignmentView } from '../views';

const guardrailId = (params: Record<string, string>) => pathId(params, 'id', 'uuid', 'Guardrail');

/** A model or provider list as given, each name once; `null` (no list) and absent (unchanged) kept. */
function distinct(list: readonly string[]): string[];
function distinct(list: readonly string[] | null | undefined): string[] | null | undefined;
function distinct(list: readonly string[] | null | undefined): string[] | null | undefined {
  return list ? [...new Set(list)] : list;
}

/** `/guardrails…`: the organization's guardrails, and their assignments to keys. */
export const GUARDRAIL_OPERATIONS: Operations<typeof GUARDRAIL_ROUTES> & Operations<typeof KEY_ASSIGNMENT_ROUTES> = {
  listGuardrails: async ({ principal, query, deps }) => {
    const guardrails = (await deps.service.listGuardrails(orgOf(principal))).filter((guardrail) => !query.workspace_id || guardrail.workspaceId === query.workspace_id);
    const { items, total } = pageOf(guardrails, query);
    return { data: items.map(guardrailView), total_count: total };
  },
  createGuardrail: async ({ principal, body, deps }) => {
    const guardrail = await deps.service.createGuardrail(orgOf(principal), {
      name: body.name,
      description: body.description ?? null,
      workspaceId: body.workspace_id ?? null,
      allowedModels: distinct(body.allowed_models) ?? null,
      ignoredModels: distinct(body.ignored_models) ?? null,
      allowedProviders: distinct(body.allowed_providers) ?? null,
      ignoredProviders: distinct(body.ignored_providers) ?? null,
      enforceZdr: body.enforce_zdr ?? false,
      budget: { amount: body.limit_usd, reset: body.reset_interval },
      includeByokInBudgets: body.include_byok_in_budgets,
    });
    return { data: guardrailView(guardrail) };
  },
  getGuardrail: async ({ principal, params, deps }) => ({ data: guardrailView(await deps.service.getGuardrail(orgOf(principal), guardrailId(params))) }),
  updateGuardrail: async ({ principal, body, params, deps }) => {
    const guardrail = await deps.service.updateGuardrail(orgOf(principal), guardrailId(params), {
      name: body.name,
      description: body.description,
      allowedModels: distinct(body.allowed_models),
      ignoredModels: distinct(body.ignored_models),
      allowedProviders: distinct(body.allowed_providers),
      ignoredProviders: distinct(body.ignored_providers),
      // `null`: not set, so unchanged.
      enforceZdr: body.enforce_zdr ?? undefined,
      budget: { amount: body.limit_usd, reset: body.reset_interval },
      includeByokInBudgets: body.include_byok_in_budgets,
    });
    if (guardrail.budget && (body.limit_usd !== undefined || body.reset_interval !== undefined)) await deps.ledgerSeeds?.guardrail(orgOf(principal), guardrail.id);
    return { data: guardrailView(guardrail) };
  },
  deleteGuardrail: async ({ principal, params, deps }) => {
    await deps.service.deleteGuardrail(orgOf(principal), guardrailId(params));
    return { deleted: true };
  },
  bulkAssignKeysToGuardrail: async ({ principal, body, params, deps }) => {
    const count = await deps.service.assignGuardrailToKeys(orgOf(principal), guardrailId(params), distinct(body.key_hashes));
    if (count > 0) await deps.ledgerSeeds?.keys(orgOf(principal), distinct(body.key_hashes));
    return { assigned_count: count };
  },
  bulkUnassignKeysFromGuardrail: async ({ principal, body, params, deps }) => {
    const count = await deps.service.unassignGuardrailFromKeys(orgOf(principal), guardrailId(params), distinct(body.key_hashes));
    return { unassigned_count: count };
  },
  listGuardrailKeyAssignments: async ({ principal, params, query, deps }) => {
    const { items, total } = await deps.service.listKeyAssignments(orgOf(principal), guardrailId(params), windowOf(query));
    return { data: items.map(keyAssignmentView), total_count: total };
  },
  listKeyAssignments: async ({ principal, query, deps }) => {
    const { items, total } = await deps.service.listKeyAssignments(orgOf(principal), undefined, windowOf(query));
    return { data: items.map(keyAssignmentView), total_count: total };
  },
};
