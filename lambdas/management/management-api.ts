import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type { AccountsService } from '../accounts/accounts-service';
import type { ExchangeEventStore } from '../federation/exchange-events';
import type { FederationService } from '../federation/federation-service';
import { authenticate, requireManagement, type AuthenticationDeps } from '../accounts/authenticate';
import { ACCESS_LEVELS, KEY_KINDS, type Principal } from '../accounts/types';
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
import { credentialHeader, jsonBody } from '../http/request';
import { json } from '../http/responses';
import { listExchangeEvents } from './exchange-events-api';
import { guardrailView, issuerView, keyView, policyView, workspaceView } from './views';

export interface ManagementDeps extends AuthenticationDeps {
  service: AccountsService;
  federation: FederationService;
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
  access: 'read' | 'write';
  run: Action;
}

const orgOf = (principal: Principal) => principal.organization.id;
const keyHash = (params: Record<string, string>) => pathId(params, 'hash', 'key-hash', 'API key');
const guardrailId = (params: Record<string, string>) => pathId(params, 'id', 'uuid', 'Guardrail');
const issuerId = (params: Record<string, string>) => pathId(params, 'id', 'uuid', 'Issuer');
const policyId = (params: Record<string, string>) => pathId(params, 'id', 'uuid', 'Policy');
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
      return json(200, { data: keys.map(keyView) });
    },
  },
  'POST /api/v1/keys': {
    access: 'write',
    run: async ({ principal, event, deps }) => {
      const body = jsonBody(event);
      rejectUnknownFields(body, ['name', 'kind', 'workspace_id', 'access_level', 'user_id', 'expires_at']);
      const { key, secret } = await deps.service.createApiKey(orgOf(principal), {
        name: requiredString(body, 'name'),
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
    run: async ({ principal, params, deps }) => json(200, { data: keyView(await deps.service.getApiKey(orgOf(principal), keyHash(params))) }),
  },
  'PATCH /api/v1/keys/{hash}': {
    access: 'write',
    run: async ({ principal, event, params, deps }) => {
      const body = jsonBody(event);
      rejectUnknownFields(body, ['name', 'disabled']);
      const patch = { name: optionalString(body, 'name'), disabled: optionalBoolean(body, 'disabled') };
      if (patch.name === undefined && patch.disabled === undefined) throw invalidParameter('body', 'name or disabled is required');
      const key = await deps.service.updateApiKey(orgOf(principal), keyHash(params), patch);
      return json(200, { data: keyView(key) });
    },
  },
  'DELETE /api/v1/keys/{hash}': {
    access: 'write',
    run: async ({ principal, params, deps }) => {
      await deps.service.deleteApiKey(orgOf(principal), keyHash(params));
      return json(200, { deleted: true });
    },
  },
  'GET /api/v1/workspaces': {
    access: 'read',
    run: async ({ principal, deps }) => {
      const workspaces = await deps.service.listWorkspaces(orgOf(principal));
      return json(200, { data: workspaces.map(workspaceView), total_count: workspaces.length });
    },
  },
  'POST /api/v1/workspaces': {
    access: 'write',
    run: async ({ principal, event, deps }) => {
      const body = jsonBody(event);
      rejectUnknownFields(body, ['name', 'slug', 'description']);
      const workspace = await deps.service.createWorkspace(orgOf(principal), {
        name: requiredString(body, 'name'),
        slug: optionalString(body, 'slug'),
        description: nullableString(body, 'description'),
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
    run: async ({ principal, deps }) => {
      const guardrails = await deps.service.listGuardrails(orgOf(principal));
      return json(200, { data: guardrails.map(guardrailView), total_count: guardrails.length });
    },
  },
  'POST /api/v1/guardrails': {
    access: 'write',
    run: async ({ principal, event, deps }) => {
      const body = jsonBody(event);
      rejectUnknownFields(body, GUARDRAIL_FIELDS);
      const guardrail = await deps.service.createGuardrail(orgOf(principal), {
        name: requiredString(body, 'name'),
        description: nullableString(body, 'description') ?? null,
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
        name: optionalString(body, 'name'),
        description: nullableString(body, 'description'),
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
    requireManagement(principal, operation.access);
    return operation.run({ principal, event, params: (event.pathParameters ?? {}) as Record<string, string>, deps });
  };
}
