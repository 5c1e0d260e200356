import { WORKSPACE_SLUG } from '../../accounts/types';
import { NotFoundError } from '../../errors';
import { pageOf } from '../list-page';
import type { WORKSPACE_CHANGE_ROUTES, WORKSPACE_ROUTES } from '../routes/workspaces';
import { orgOf, type Operations } from '../operation';
import { workspaceView } from '../views';

/**
 * The workspace's id or its slug (public `/workspaces/{id}`); every id is a lowercase UUID, which
 * has a slug's shape. Another value names nothing: a 404 that does not echo it (lambdas/ids.ts).
 */
export function workspaceRef(params: Record<string, string>): string {
  const value = params.id;
  if (value === undefined || !WORKSPACE_SLUG.test(value)) throw new NotFoundError('Workspace not found');
  return value;
}

/** `/workspaces…`: the organization's workspaces, each named by its id or its slug. */
export const WORKSPACE_OPERATIONS: Operations<typeof WORKSPACE_ROUTES> & Operations<typeof WORKSPACE_CHANGE_ROUTES> = {
  listWorkspaces: async ({ principal, query, deps }) => {
    const { items, total } = pageOf(await deps.service.listWorkspaces(orgOf(principal)), query);
    return { data: items.map(workspaceView), total_count: total };
  },
  createWorkspace: async ({ principal, body, deps }) => {
    const workspace = await deps.service.createWorkspace(orgOf(principal), { name: body.name, slug: body.slug, description: body.description });
    return { data: workspaceView(workspace) };
  },
  getWorkspace: async ({ principal, params, deps }) => ({ data: workspaceView(await deps.service.findWorkspace(orgOf(principal), workspaceRef(params))) }),
  updateWorkspace: async ({ principal, params, body, deps }) => {
    const workspace = await deps.service.updateWorkspace(orgOf(principal), workspaceRef(params), { name: body.name, slug: body.slug, description: body.description });
    return { data: workspaceView(workspace) };
  },
  deleteWorkspace: async ({ principal, params, deps }) => {
    await deps.service.deleteWorkspace(orgOf(principal), workspaceRef(params));
    return { deleted: true };
  },
};
