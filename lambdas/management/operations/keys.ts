import type { ApiKeyRecord } from '../../accounts/types';
import { pathId } from '../../ids';
import { json } from '../../http/responses';
import type { ManagementDeps } from '../operation';
import type { KEY_ROUTES } from '../routes/keys';
import { orgOf, type Operations } from '../operation';
import { keyView } from '../views';

/** Key views with each key's usage: one usage query for the whole list. */
async function keyViews(deps: ManagementDeps, organizationId: string, keys: readonly ApiKeyRecord[]) {
  const usage = await deps.usage.keyUsage(organizationId, keys.map((key) => key.hash), deps.clock.now());
  return keys.map((key) => keyView(key, usage.get(key.hash)));
}

const keyHash = (params: Record<string, string>) => pathId(params, 'hash', 'key-hash', 'API key');

export const KEY_OPERATIONS: Operations<typeof KEY_ROUTES> = {
  listKeys: async ({ principal, query, deps }) => {
    // The keys and the organization's usage at once: neither needs the other first.
    const [all, usage] = await Promise.all([deps.service.listApiKeys(orgOf(principal)), deps.usage.organizationUsage(orgOf(principal), deps.clock.now())]);
    const keys = all.filter(
      (key) =>
        (query.include_disabled || !key.disabled) &&
        (!query.workspace_id || key.workspaceId === query.workspace_id) &&
        // The public list holds keys of workspaces only; management keys come on request.
        (query.include_management || key.kind !== 'management'),
    );
    return json(200, { data: keys.map((key) => keyView(key, usage.get(key.hash))) });
  },
  createKey: async ({ principal, body, deps }) => {
    const { key, secret } = await deps.service.createApiKey(orgOf(principal), {
      name: body.name,
      kind: body.kind ?? 'workspace',
      workspaceId: body.workspace_id,
      accessLevel: body.access_level,
      userId: body.user_id,
      expiresAt: body.expires_at,
    });
    return json(201, { data: keyView(key), key: secret });
  },
  getKey: async ({ principal, params, deps }) => {
    const key = await deps.service.getApiKey(orgOf(principal), keyHash(params));
    return json(200, { data: (await keyViews(deps, orgOf(principal), [key]))[0] });
  },
  updateKey: async ({ principal, body, params, deps }) => {
    const key = await deps.service.updateApiKey(orgOf(principal), keyHash(params), { name: body.name, disabled: body.disabled });
    return json(200, { data: (await keyViews(deps, orgOf(principal), [key]))[0] });
  },
  deleteKey: async ({ principal, params, deps }) => {
    await deps.service.deleteApiKey(orgOf(principal), keyHash(params));
    return json(200, { deleted: true });
  },
};
