import { KEYS_PAGE, type ApiKeyRecord } from '../../accounts/types';
import { pathId } from '../../ids';
import type { ManagementDeps } from '../operation';
import type { KEY_ROUTES } from '../routes/keys';
import { orgOf, type Operations } from '../operation';
import { keyView } from '../views';

/** The default workspace's id when a management key is among `keys` (keyView says why); no read otherwise. */
async function managementKeysWorkspace(deps: ManagementDeps, organizationId: string, keys: readonly ApiKeyRecord[]): Promise<string | null> {
  return keys.some((key) => key.kind === 'management') ? deps.service.defaultWorkspaceId(organizationId) : null;
}

/** A key's view with its usage: the usage query beside the default workspace's read, which only a management key needs. */
async function keyWithUsage(deps: ManagementDeps, organizationId: string, key: ApiKeyRecord) {
  const [usage, defaultWorkspaceId] = await Promise.all([
    deps.usage.keyUsage(organizationId, [key.hash], deps.clock.now()),
    managementKeysWorkspace(deps, organizationId, [key]),
  ]);
  return keyView(key, usage.get(key.hash), defaultWorkspaceId);
}

/**
 * The page of keys a list shows (`include_disabled`, `offset`, at most {@link KEYS_PAGE}): of
 * the organization's every key with `include_management` and no workspace (modelgate's own
 * listing, every policy target), otherwise of the workspace asked for, or of the default
 * workspace (the public default); either way reading no key past the page.
 */
async function listedKeys(deps: ManagementDeps, organizationId: string, query: { workspace_id?: string; include_management?: boolean; include_disabled?: boolean; offset?: number | null }) {
  const page = { offset: query.offset ?? 0, limit: KEYS_PAGE, includeDisabled: query.include_disabled === true };
  if (!query.include_management || query.workspace_id) return { keys: await deps.service.listWorkspaceApiKeys(organizationId, query.workspace_id, page), defaultWorkspaceId: null };
  const [keys, defaultWorkspaceId] = await Promise.all([deps.service.listApiKeys(organizationId, page), deps.service.defaultWorkspaceId(organizationId)]);
  return { keys, defaultWorkspaceId };
}

const keyHash = (params: Record<string, string>) => pathId(params, 'hash', 'key-hash', 'API key');

/** `/keys…`: the organization's API keys, with their usage. */
export const KEY_OPERATIONS: Operations<typeof KEY_ROUTES> = {
  listKeys: async ({ principal, query, deps }) => {
    // The keys, and the day their usage is folded through, at once: neither needs the other first.
    const [listed, mark] = await Promise.all([listedKeys(deps, orgOf(principal), query), deps.usage.foldMark(orgOf(principal))]);
    const { keys } = listed;
    // The listed keys' running totals and the days after them: what the page shows, whatever the history.
    const usage = await deps.usage.keyUsage(orgOf(principal), keys.map((key) => key.hash), deps.clock.now(), mark);
    return { data: keys.map((key) => keyView(key, usage.get(key.hash), listed.defaultWorkspaceId)) };
  },
  createKey: async ({ principal, body, deps }) => {
    const { key, secret } = await deps.service.createApiKey(orgOf(principal), {
      name: body.name,
      kind: body.kind ?? 'workspace',
      workspaceId: body.workspace_id,
      accessLevel: body.access_level,
      userId: body.user_id,
      expiresAt: body.expires_at,
      limit: body.limit,
      limitReset: body.limit_reset,
      includeByokInLimit: body.include_byok_in_limit,
    });
    if (key.limit) await deps.ledgerSeeds?.keys(orgOf(principal), [key.hash]);
    return { data: keyView(key, undefined, await managementKeysWorkspace(deps, orgOf(principal), [key])), key: secret };
  },
  getKey: async ({ principal, params, deps }) => {
    const key = await deps.service.getApiKey(orgOf(principal), keyHash(params));
    return { data: await keyWithUsage(deps, orgOf(principal), key) };
  },
  updateKey: async ({ principal, body, params, deps }) => {
    const key = await deps.service.updateApiKey(orgOf(principal), keyHash(params), {
      name: body.name,
      disabled: body.disabled,
      limit: body.limit,
      limitReset: body.limit_reset,
      includeByokInLimit: body.include_byok_in_limit,
    });
    if (key.limit && (body.limit !== undefined || body.limit_reset !== undefined)) await deps.ledgerSeeds?.keys(orgOf(principal), [key.hash]);
    return { data: await keyWithUsage(deps, orgOf(principal), key) };
  },
  deleteKey: async ({ principal, params, deps }) => {
    await deps.service.deleteApiKey(orgOf(principal), keyHash(params));
    return { deleted: true };
  },
};
