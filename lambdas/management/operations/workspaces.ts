import { WORKSPACE_LIMITS } from '../../accounts/types';
import { nullableString, optionalString, rejectUnknownFields, requiredString } from '../../http/fields';
import { pathId } from '../../http/ids';
import { jsonBody } from '../../http/request';
import { json } from '../../http/responses';
import { pageOf, parseListPage } from '../list-page';
import type { WORKSPACE_ROUTES } from '../routes/workspaces';
import { orgOf, type Operations } from '../operation';
import { workspaceView } from '../views';

export const WORKSPACE_OPERATIONS: Operations<typeof WORKSPACE_ROUTES> = {
  listWorkspaces: async ({ principal, event, deps }) => {
    const page = parseListPage(event.queryStringParameters ?? {});
    const { items, total } = pageOf(await deps.service.listWorkspaces(orgOf(principal)), page);
    return json(200, { data: items.map(workspaceView), total_count: total });
  },
  createWorkspace: async ({ principal, event, deps }) => {
    const body = jsonBody(event);
    rejectUnknownFields(body, ['name', 'slug', 'description']);
    const workspace = await deps.service.createWorkspace(orgOf(principal), {
      name: requiredString(body, 'name', WORKSPACE_LIMITS.name),
      slug: optionalString(body, 'slug'),
      description: nullableString(body, 'description', WORKSPACE_LIMITS.description),
    });
    return json(201, { data: workspaceView(workspace) });
  },
  getWorkspace: async ({ principal, params, deps }) =>
    json(200, { data: workspaceView(await deps.service.getWorkspace(orgOf(principal), pathId(params, 'id', 'uuid', 'Workspace'))) }),
};
