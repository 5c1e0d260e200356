import { pathId } from '../../ids';
import { json } from '../../http/responses';
import { pageOf } from '../list-page';
import type { WORKSPACE_CHANGE_ROUTES, WORKSPACE_ROUTES } from '../routes/workspaces';
import { orgOf, type Operations } from '../operation';
import { workspaceView } from '../views';

const workspaceId = (params: Record<string, string>) => pathId(params, 'id', 'uuid', 'Workspace');

export const WORKSPACE_OPERATIONS: Operations<typeof WORKSPACE_ROUTES> & Operations<typeof WORKSPACE_CHANGE_ROUTES> = {
  listWorkspaces: async ({ principal, query, deps }) => {
    const { items, total } = pageOf(await deps.service.listWorkspaces(orgOf(principal)), query);
    return json(200, { data: items.map(workspaceView), total_count: total });
  },
  createWorkspace: async ({ principal, body, deps }) => {
    const workspace = await deps.service.createWorkspace(orgOf(principal), { name: body.name, slug: body.slug, description: body.description });
    return json(201, { data: workspaceView(workspace) });
  },
  getWorkspace: async ({ principal, params, deps }) => json(200, { data: workspaceView(await deps.service.getWorkspace(orgOf(principal), workspaceId(params))) }),
  updateWorkspace: async ({ principal, params, body, deps }) => {
    const workspace = await deps.service.updateWorkspace(orgOf(principal), workspaceId(params), { name: body.name, slug: body.slug, description: body.description });
    return json(200, { data: workspaceView(workspace) });
  },
  deleteWorkspace: async ({ principal, params, deps }) => {
    await deps.service.deleteWorkspace(orgOf(principal), workspaceId(params));
    return json(200, { deleted: true });
  },
};
