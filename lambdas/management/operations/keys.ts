import { ACCESS_LEVELS, KEY_KINDS, KEY_NAME_MAX, type ApiKeyRecord } from '../../accounts/types';
import { invalidParameter } from '../../errors';
import { nullableString, oneOf, optionalBoolean, optionalString, rejectUnknownFields, requiredString } from '../../http/fields';
import { checkId, optionalId, pathId } from '../../http/ids';
import { jsonBody } from '../../http/request';
import { json } from '../../http/responses';
import type { ManagementDeps } from '../management-api';
import type { KEY_ROUTES } from '../routes/keys';
import { orgOf, type Operations } from '../operation';
import { keyView } from '../views';

/** Key views with each key's usage: one usage query for the whole list. */
async function keyViews(deps: ManagementDeps, organizationId: string, keys: readonly ApiKeyRecord[]) {
  const usage = await deps.usage.keyUsage(organizationId, keys.map((key) => key.hash), deps.clock.now());
  return keys.map((key) => keyView(key, usage.get(key.hash)));
}

const keyHash = (params: Record<string, string>) => pathId(params, 'hash', 'key-hash', 'API key');

/** A boolean query flag: absent is false; anything but `true` or `false` is a 400 naming it. */
function queryBoolean(value: string | undefined, name: string): boolean {
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  throw invalidParameter(name, 'must be true or false');
}

export const KEY_OPERATIONS: Operations<typeof KEY_ROUTES> = {
  listKeys: async ({ principal, event, deps }) => {
    const query = event.queryStringParameters ?? {};
    const includeDisabled = queryBoolean(query.include_disabled, 'include_disabled');
    const workspaceId = query.workspace_id === undefined ? undefined : checkId(query.workspace_id, 'workspace_id', 'uuid');
    const keys = (await deps.service.listApiKeys(orgOf(principal))).filter(
      (key) => (includeDisabled || !key.disabled) && (!workspaceId || key.workspaceId === workspaceId),
    );
    return json(200, { data: await keyViews(deps, orgOf(principal), keys) });
  },
  createKey: async ({ principal, event, deps }) => {
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
  getKey: async ({ principal, params, deps }) => {
    const key = await deps.service.getApiKey(orgOf(principal), keyHash(params));
    return json(200, { data: (await keyViews(deps, orgOf(principal), [key]))[0] });
  },
  updateKey: async ({ principal, event, params, deps }) => {
    const body = jsonBody(event);
    rejectUnknownFields(body, ['name', 'disabled']);
    const patch = { name: optionalString(body, 'name', KEY_NAME_MAX), disabled: optionalBoolean(body, 'disabled') };
    if (patch.name === undefined && patch.disabled === undefined) throw invalidParameter('body', 'name or disabled is required');
    const key = await deps.service.updateApiKey(orgOf(principal), keyHash(params), patch);
    return json(200, { data: (await keyViews(deps, orgOf(principal), [key]))[0] });
  },
  deleteKey: async ({ principal, params, deps }) => {
    await deps.service.deleteApiKey(orgOf(principal), keyHash(params));
    return json(200, { deleted: true });
  },
};
