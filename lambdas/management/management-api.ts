import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type { AccountsService } from '../accounts/accounts-service';
import { ConditionError, checkCondition } from '../federation/condition';
import type { ExchangeEventStore } from '../federation/exchange-events';
import type { FederationService } from '../federation/federation-service';
import { hasFederationEntitlement } from '../federation/types';
import { testPolicy, type PolicyTesterDeps } from '../federation/policy-tester';
import { authenticate, requireManagement, type AuthenticationDeps } from '../accounts/authenticate';
import { ACCESS_LEVELS, GUARDRAIL_LIMITS, KEY_KINDS, KEY_NAME_MAX, WORKSPACE_LIMITS, type ApiKeyRecord, type Principal } from '../accounts/types';
import { NO_USAGE, daysBefore, utcDate, type ActivityRow, type UsageStore } from '../usage/usage';
import { NotFoundError, invalidParameter } from '../errors';
import {
  nullableString,
  nullableStringList,
  oneOf,
  optionalBoolean,
  optionalString,
  rejectUnknownFields,
  requiredString,
  requiredStringList,
} from '../http/fields';
import { checkId, checkIdList, optionalId, pathId } from '../http/ids';
import { credentialHeader, jsonBody, pathParameters } from '../http/request';
import { json } from '../http/responses';
import { listExchangeEvents } from './exchange-events-api';
import { pageOf, parseListPage } from './list-page';
import { activityView, currentKeyView, guardrailView, issuerView, keyView, policyView, workspaceView } from './views';

/** What an address-rate check answers: allowed, or when to retry (whole seconds). */
export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export interface ManagementDeps extends AuthenticationDeps {
  service: AccountsService;
  federation: FederationService;
  /** The policy tester's exchange decision (never mints, records nothing). */
  policyTester: PolicyTesterDeps;
  /**
   * Counts one hit against the token endpoint's per-address limit (SPEC 7.2, 8): the policy
   * tester verifies tokens as the exchange does, so it shares that budget and cannot be
   * used to get around it.
   */
  exchangeRate: (sourceIp: string) => Promise<RateDecision>;
  usage: Pick<UsageStore, 'keyUsage' | 'activity'>;
  /** Token exchange events (workload identity). */
  exchangeEvents: ExchangeEventStore;
}

type Action = (request: {
  principal: Principal;
  event: APIGatewayProxyEvent;
  params: Record<string, string>;
  deps: ManagementDeps;
}) => Promise<APIGatewayProxyResult>;

interface Operation {
  /** `self`: any credential, about itself (SPEC 4.5 scopes do not apply). */
  access: 'read' | 'write' | 'self';
  run: Action;
}

/** Key views with each key's usage: one usage query for the whole list. */
async function keyViews(deps: ManagementDeps, organizationId: string, keys: readonly ApiKeyRecord[]) {
  const usage = await deps.usage.keyUsage(organizationId, keys.map((key) => key.hash), deps.clock.now());
  return keys.map((key) => keyView(key, usage.get(key.hash)));
}

/** How far back `GET /activity` reaches, in UTC days before today. */
const ACTIVITY_DAYS = 30;

const orgOf = (principal: Principal) => principal.organization.id;
const keyHash = (params: Record<string, string>) => pathId(params, 'hash', 'key-hash', 'API key');
const guardrailId = (params: Record<string, string>) => pathId(params, 'id', 'uuid', 'Guardrail');
const issuerId = (params: Record<string, string>) => pathId(params, 'id', 'uuid', 'Issuer');
const policyId = (params: Record<string, string>) => pathId(params, 'id', 'uuid', 'Policy');
/** SPEC 8: the subject token limit of the token endpoint applies to the tester too. */
export const MAX_SUBJECT_TOKEN_BYTES = 16 * 1024;
const keyHashes = (body: Record<string, unknown>) => checkIdList(requiredStringList(body, 'key_hashes', 500), 'key_hashes', 'key-hash');

/** A boolean query flag: absent is false; anything but `true` or `false` is a 400 naming it. */
function queryBoolean(value: string | undefined, name: string): boolean {
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  throw invalidParameter(name, 'must be true or false');
}

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

/** Management operations by `METHOD resource`, the API Gateway resource template. */
const OPERATIONS: Record<string, Operation> = {
  'GET /api/v1/keys': {
    access: 'read',
    run: async ({ principal, event, deps }) => {
      const query = event.queryStringParameters ?? {};
      const includeDisabled = queryBoolean(query.include_disabled, 'include_disabled');
      const workspaceId = query.workspace_id === undefined ? undefined : checkId(query.workspace_id, 'workspace_id', 'uuid');
      const keys = (await deps.service.listApiKeys(orgOf(principal))).filter(
        (key) => (includeDisabled || !key.disabled) && (!workspaceId || key.workspaceId === workspaceId),
      );
      return json(200, { data: await keyViews(deps, orgOf(principal), keys) });
    },
  },
  'POST /api/v1/keys': {
    access: 'write',
    run: async ({ principal, event, deps }) => {
      const body = jsonBody(event);
      rejectUnknownFields(body, ['name', 'kind', 'workspace_id', 'access_level', 'user_id', 'expires_at']);
      const { key, secret } = await deps.service.createApiKey(orgOf(principal), {
        name: requiredString(body, 'name', KEY_NAME_MAX),
        kind: oneOf(body, 'kind', KEY_KINDS) ?? 'workspace',
        workspaceId: optionalId(body, 'workspace_id', 'uuid'),
        accessLevel: oneOf(body, 'access_level', ACCESS_LEVELS),
        userId: optionalId(body, 'user_id', 'uuid'),
        expiresAt: nullableString(body, 'expires_at', 64),
      });
      return json(201, { data: keyView(key), key: secret });
    },
  },
  'GET /api/v1/keys/{hash}': {
    access: 'read',
    run: async ({ principal, params, deps }) => {
      const key = await deps.service.getApiKey(orgOf(principal), keyHash(params));
      return json(200, { data: (await keyViews(deps, orgOf(principal), [key]))[0] });
    },
  },
  'PATCH /api/v1/keys/{hash}': {
    access: 'write',
    run: async ({ principal, event, params, deps }) => {
      const body = jsonBody(event);
      rejectUnknownFields(body, ['name', 'disabled']);
      const patch = { name: optionalString(body, 'name', KEY_NAME_MAX), disabled: optionalBoolean(body, 'disabled') };
      if (patch.name === undefined && patch.disabled === undefined) throw invalidParameter('body', 'name or disabled is required');
      const key = await deps.service.updateApiKey(orgOf(principal), keyHash(params), patch);
      return json(200, { data: (await keyViews(deps, orgOf(principal), [key]))[0] });
    },
  },
  'DELETE /api/v1/keys/{hash}': {
    access: 'write',
    run: async ({ principal, params, deps }) => {
      await deps.service.deleteApiKey(orgOf(principal), keyHash(params));
      return json(200, { deleted: true });
    },
  },
  'GET /api/v1/key': {
    access: 'self',
    run: async ({ principal, deps }) => {
      const usage = await deps.usage.keyUsage(orgOf(principal), [principal.key.hash], deps.clock.now());
      return json(200, { data: currentKeyView(principal, usage.get(principal.key.hash) ?? NO_USAGE) });
    },
  },
  'GET /api/v1/activity': {
    access: 'read',
    run: async ({ principal, event, deps }) => {
      const query = event.queryStringParameters ?? {};
      const today = utcDate(deps.clock.now());
      const earliest = daysBefore(deps.clock.now(), ACTIVITY_DAYS);
      let from = earliest;
      let to = today;
      if (query.date !== undefined) {
        if (!/^\d{4}-\d{2}-\d{2}$/.test(query.date) || query.date < earliest || query.date > today) {
          throw invalidParameter('date', `must be a UTC date (YYYY-MM-DD) from ${earliest} to ${today}`);
        }
        from = to = query.date;
      }
      let onlyKey: string | undefined;
      if (query.api_key_hash !== undefined) {
        onlyKey = checkId(query.api_key_hash, 'api_key_hash', 'key-hash');
        await deps.service.getApiKey(orgOf(principal), onlyKey);
      }
      const rows = await deps.usage.activity(orgOf(principal), from, to);
      return json(200, { data: aggregateActivity(rows.filter((row) => !onlyKey || row.keyHash === onlyKey)).map(activityView) });
    },
  },
  'GET /api/v1/workspaces': {
    access: 'read',
    run: async ({ principal, event, deps }) => {
      const page = parseListPage(event.queryStringParameters ?? {});
      const { items, total } = pageOf(await deps.service.listWorkspaces(orgOf(principal)), page);
      return json(200, { data: items.map(workspaceView), total_count: total });
    },
  },
  'POST /api/v1/workspaces': {
    access: 'write',
    run: async ({ principal, event, deps }) => {
      const body = jsonBody(event);
      rejectUnknownFields(body, ['name', 'slug', 'description']);
      const workspace = await deps.service.createWorkspace(orgOf(principal), {
        name: requiredString(body, 'name', WORKSPACE_LIMITS.name),
        slug: optionalString(body, 'slug'),
        description: nullableString(body, 'description', WORKSPACE_LIMITS.description),
      });
      return json(201, { data: workspaceView(workspace) });
    },
  },
  'GET /api/v1/workspaces/{id}': {
    access: 'read',
    run: async ({ principal, params, deps }) =>
      json(200, { data: workspaceView(await deps.service.getWorkspace(orgOf(principal), pathId(params, 'id', 'uuid', 'Workspace'))) }),
  },
  'GET /api/v1/guardrails': {
    access: 'read',
    run: async ({ principal, event, deps }) => {
      const query = event.queryStringParameters ?? {};
      const page = parseListPage(query);
      const workspaceId = query.workspace_id === undefined ? undefined : checkId(query.workspace_id, 'workspace_id', 'uuid');
      const guardrails = (await deps.service.listGuardrails(orgOf(principal))).filter((guardrail) => !workspaceId || guardrail.workspaceId === workspaceId);
      const { items, total } = pageOf(guardrails, page);
      return json(200, { data: items.map(guardrailView), total_count: total });
    },
  },
  'POST /api/v1/guardrails': {
    access: 'write',
    run: async ({ principal, event, deps }) => {
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
  },
  'GET /api/v1/guardrails/{id}': {
    access: 'read',
    run: async ({ principal, params, deps }) => json(200, { data: guardrailView(await deps.service.getGuardrail(orgOf(principal), guardrailId(params))) }),
  },
  'PATCH /api/v1/guardrails/{id}': {
    access: 'write',
    run: async ({ principal, event, params, deps }) => {
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
  },
  'DELETE /api/v1/guardrails/{id}': {
    access: 'write',
    run: async ({ principal, params, deps }) => {
      await deps.service.deleteGuardrail(orgOf(principal), guardrailId(params));
      return json(200, { deleted: true });
    },
  },
  'POST /api/v1/guardrails/{id}/assignments/keys': {
    access: 'write',
    run: async ({ principal, event, params, deps }) => {
      const body = jsonBody(event);
      rejectUnknownFields(body, ['key_hashes']);
      const count = await deps.service.assignGuardrailToKeys(orgOf(principal), guardrailId(params), keyHashes(body));
      return json(200, { assigned_count: count });
    },
  },
  'POST /api/v1/guardrails/{id}/assignments/keys/remove': {
    access: 'write',
    run: async ({ principal, event, params, deps }) => {
      const body = jsonBody(event);
      rejectUnknownFields(body, ['key_hashes']);
      const count = await deps.service.unassignGuardrailFromKeys(orgOf(principal), guardrailId(params), keyHashes(body));
      return json(200, { unassigned_count: count });
    },
  },
  // Workload identity federation (SPEC 2.11, 2.12; the shape README documents).
  'GET /api/v1/workload-identity/issuers': {
    access: 'read',
    run: async ({ principal, deps }) => {
      const issuers = await deps.federation.listIssuers(orgOf(principal));
      return json(200, { data: issuers.map(issuerView), total_count: issuers.length });
    },
  },
  'POST /api/v1/workload-identity/issuers': {
    access: 'write',
    run: async ({ principal, event, deps }) => json(201, { data: issuerView(await deps.federation.createIssuer(orgOf(principal), jsonBody(event))) }),
  },
  'GET /api/v1/workload-identity/issuers/{id}': {
    access: 'read',
    run: async ({ principal, params, deps }) => json(200, { data: issuerView(await deps.federation.getIssuer(orgOf(principal), issuerId(params))) }),
  },
  'PATCH /api/v1/workload-identity/issuers/{id}': {
    access: 'write',
    run: async ({ principal, event, params, deps }) =>
      json(200, { data: issuerView(await deps.federation.updateIssuer(orgOf(principal), issuerId(params), jsonBody(event))) }),
  },
  'DELETE /api/v1/workload-identity/issuers/{id}': {
    access: 'write',
    run: async ({ principal, params, deps }) => {
      await deps.federation.deleteIssuer(orgOf(principal), issuerId(params));
      return json(200, { deleted: true });
    },
  },
  'GET /api/v1/workload-identity/policies': {
    access: 'read',
    run: async ({ principal, event, deps }) => {
      const filter = event.queryStringParameters?.issuer_id;
      const policies = await deps.federation.listPolicies(orgOf(principal), filter === undefined ? undefined : checkId(filter, 'issuer_id', 'uuid'));
      return json(200, { data: policies.map(policyView), total_count: policies.length });
    },
  },
  'POST /api/v1/workload-identity/policies': {
    access: 'write',
    run: async ({ principal, event, deps }) => json(201, { data: policyView(await deps.federation.createPolicy(orgOf(principal), jsonBody(event))) }),
  },
  'GET /api/v1/workload-identity/policies/{id}': {
    access: 'read',
    run: async ({ principal, params, deps }) => json(200, { data: policyView(await deps.federation.getPolicy(orgOf(principal), policyId(params))) }),
  },
  'PATCH /api/v1/workload-identity/policies/{id}': {
    access: 'write',
    run: async ({ principal, event, params, deps }) =>
      json(200, { data: policyView(await deps.federation.updatePolicy(orgOf(principal), policyId(params), jsonBody(event))) }),
  },
  'POST /api/v1/workload-identity/policies/{id}/evaluate': {
    // Read access suffices: the tester changes nothing.
    access: 'read',
    run: async ({ principal, event, params, deps }) => {
      const id = policyId(params);
      const rate = await deps.exchangeRate(event.requestContext.identity.sourceIp);
      if (!rate.allowed) {
        return json(
          429,
          { error: { code: 429, message: 'Too many token evaluations from this address; retry later', metadata: { retry_after_seconds: rate.retryAfterSeconds } } },
          { 'Retry-After': String(rate.retryAfterSeconds) },
        );
      }
      const body = jsonBody(event);
      rejectUnknownFields(body, ['subject_token']);
      const subjectToken = requiredString(body, 'subject_token', MAX_SUBJECT_TOKEN_BYTES);
      if (Buffer.byteLength(subjectToken, 'utf8') > MAX_SUBJECT_TOKEN_BYTES) {
        throw invalidParameter('subject_token', `must be at most ${MAX_SUBJECT_TOKEN_BYTES} bytes`);
      }
      // Found in the caller's organization first: another organization's policy is a 404.
      const policy = await deps.federation.getPolicy(orgOf(principal), id);
      const outcome = await testPolicy(deps.policyTester, policy, subjectToken);
      return json(200, { data: { result: outcome.result, expires_in: outcome.expiresIn, steps: outcome.steps } });
    },
  },
  'GET /api/v1/workload-identity/entitlement': {
    // What the settings page needs first: whether the plan includes federation, and whether
    // this credential may change anything.
    access: 'read',
    run: async ({ principal }) =>
      json(200, {
        data: {
          entitled: hasFederationEntitlement(principal.organization.plan),
          plan: principal.organization.plan,
          access_level: principal.key.accessLevel,
        },
      }),
  },
  'POST /api/v1/workload-identity/conditions/check': {
    access: 'read',
    run: async ({ event }) => {
      const body = jsonBody(event);
      rejectUnknownFields(body, ['condition']);
      if (typeof body.condition !== 'string') throw invalidParameter('condition', 'must be a CEL expression (a string)');
      // SPEC 4.4 rules 1-3: the save-time checker itself, so the page shows exactly what saving would say.
      try {
        const checked = checkCondition(body.condition);
        return json(200, { data: { valid: true, message: null, variables: checked.variables } });
      } catch (error) {
        if (error instanceof ConditionError) return json(200, { data: { valid: false, message: error.message, variables: [] } });
        throw error;
      }
    },
  },
  'DELETE /api/v1/workload-identity/policies/{id}': {
    access: 'write',
    run: async ({ principal, params, deps }) => {
      await deps.federation.deletePolicy(orgOf(principal), policyId(params));
      return json(200, { deleted: true });
    },
  },
  'GET /api/v1/workload-identity/events': {
    access: 'read',
    run: async ({ principal, event, deps }) =>
      json(200, await listExchangeEvents(deps.exchangeEvents, deps.clock, orgOf(principal), event.queryStringParameters ?? {})),
  },
};

/**
 * The management API: authenticate, check that the credential is a management key with
 * enough access, then run the operation for the caller's organization only.
 */
export function createManagementApi(deps: ManagementDeps) {
  return async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
    const operation = OPERATIONS[`${event.httpMethod} ${event.resource}`];
    if (!operation) throw new NotFoundError();
    const principal = await authenticate(credentialHeader(event), deps);
    if (operation.access !== 'self') requireManagement(principal, operation.access);
    return operation.run({ principal, event, params: pathParameters(event), deps });
  };
}

/** Rows of several keys for one day, model and endpoint become one row (the public shape has no key). */
function aggregateActivity(rows: readonly ActivityRow[]): Omit<ActivityRow, 'keyHash'>[] {
  const byGroup = new Map<string, Omit<ActivityRow, 'keyHash'>>();
  for (const { keyHash: _keyHash, ...row } of rows) {
    const group = `${row.date}|${row.endpointId}`;
    const current = byGroup.get(group);
    if (!current) {
      byGroup.set(group, { ...row, requestsViaPolicy: { ...row.requestsViaPolicy } });
      continue;
    }
    current.requests += row.requests;
    current.promptTokens += row.promptTokens;
    current.completionTokens += row.completionTokens;
    current.usage += row.usage;
    current.requestsViaApiKey += row.requestsViaApiKey;
    for (const [policy, count] of Object.entries(row.requestsViaPolicy)) {
      current.requestsViaPolicy[policy] = (current.requestsViaPolicy[policy] ?? 0) + count;
    }
  }
  // Newest day first, then by model and endpoint.
  return [...byGroup.values()].sort((a, b) => b.date.localeCompare(a.date) || a.endpointId.localeCompare(b.endpointId));
}
