import { GUARDRAIL_LIMITS } from '../../accounts/types';
import { nullableString, nullableStringList, optionalBoolean, optionalString, rejectUnknownFields, requiredString, requiredStringList } from '../../http/fields';
import { checkId, checkIdList, optionalId, pathId } from '../../http/ids';
import { jsonBody } from '../../http/request';
import { json } from '../../http/responses';
import { pageOf, parseListPage } from '../list-page';
import type { GUARDRAIL_ROUTES } from '../routes/guardrails';
import { orgOf, type Operations } from '../operation';
import { guardrailView } from '../views';

const guardrailId = (params: Record<string, string>) => pathId(params, 'id', 'uuid', 'Guardrail');
const keyHashes = (body: Record<string, unknown>) => checkIdList(requiredStringList(body, 'key_hashes', 500), 'key_hashes', 'key-hash');

const GUARDRAIL_FIELDS = [
  'name',
  'description',
  'workspace_id',
  'allowed_models',
  'ignored_models',
  'allowed_providers',
  'ignored_providers',
  'enforce_zdr',
] as const;

export const GUARDRAIL_OPERATIONS: Operations<typeof GUARDRAIL_ROUTES> = {
  listGuardrails: async ({ principal, event, deps }) => {
    const query = event.queryStringParameters ?? {};
    const page = parseListPage(query);
    const workspaceId = query.workspace_id === undefined ? undefined : checkId(query.workspace_id, 'workspace_id', 'uuid');
    const guardrails = (await deps.service.listGuardrails(orgOf(principal))).filter((guardrail) => !workspaceId || guardrail.workspaceId === workspaceId);
    const { items, total } = pageOf(guardrails, page);
    return json(200, { data: items.map(guardrailView), total_count: total });
  },
  createGuardrail: async ({ principal, event, deps }) => {
    const body = jsonBody(event);
    rejectUnknownFields(body, GUARDRAIL_FIELDS);
    const guardrail = await deps.service.createGuardrail(orgOf(principal), {
      name: requiredString(body, 'name', GUARDRAIL_LIMITS.name),
      description: nullableString(body, 'description', GUARDRAIL_LIMITS.description) ?? null,
      workspaceId: optionalId(body, 'workspace_id', 'uuid') ?? null,
      allowedModels: nullableStringList(body, 'allowed_models') ?? null,
      ignoredModels: nullableStringList(body, 'ignored_models') ?? null,
      allowedProviders: nullableStringList(body, 'allowed_providers') ?? null,
      ignoredProviders: nullableStringList(body, 'ignored_providers') ?? null,
      enforceZdr: optionalBoolean(body, 'enforce_zdr') ?? false,
    });
    return json(201, { data: guardrailView(guardrail) });
  },
  getGuardrail: async ({ principal, params, deps }) => json(200, { data: guardrailView(await deps.service.getGuardrail(orgOf(principal), guardrailId(params))) }),
  updateGuardrail: async ({ principal, event, params, deps }) => {
    const body = jsonBody(event);
    rejectUnknownFields(body, GUARDRAIL_FIELDS.filter((f) => f !== 'workspace_id'));
    const guardrail = await deps.service.updateGuardrail(orgOf(principal), guardrailId(params), {
      name: optionalString(body, 'name', GUARDRAIL_LIMITS.name),
      description: nullableString(body, 'description', GUARDRAIL_LIMITS.description),
      allowedModels: nullableStringList(body, 'allowed_models'),
      ignoredModels: nullableStringList(body, 'ignored_models'),
      allowedProviders: nullableStringList(body, 'allowed_providers'),
      ignoredProviders: nullableStringList(body, 'ignored_providers'),
      enforceZdr: optionalBoolean(body, 'enforce_zdr'),
    });
    return json(200, { data: guardrailView(guardrail) });
  },
  deleteGuardrail: async ({ principal, params, deps }) => {
    await deps.service.deleteGuardrail(orgOf(principal), guardrailId(params));
    return json(200, { deleted: true });
  },
  bulkAssignKeysToGuardrail: async ({ principal, event, params, deps }) => {
    const body = jsonBody(event);
    rejectUnknownFields(body, ['key_hashes']);
    const count = await deps.service.assignGuardrailToKeys(orgOf(principal), guardrailId(params), keyHashes(body));
    return json(200, { assigned_count: count });
  },
  bulkUnassignKeysFromGuardrail: async ({ principal, event, params, deps }) => {
    const body = jsonBody(event);
    rejectUnknownFields(body, ['key_hashes']);
    const count = await deps.service.unassignGuardrailFromKeys(orgOf(principal), guardrailId(params), keyHashes(body));
    return json(200, { unassigned_count: count });
  },
};
