import { ref } from '../../openapi/json-schema';
import type { RouteDefinition } from '../../route-definition';
import { listPageParameters } from '../list-page';

/** Workspaces of the organization (public `/workspaces`; SPEC 2.3). */
export const WORKSPACE_ROUTES = [
  {
    operationId: 'listWorkspaces',
    method: 'GET',
    path: '/workspaces',
    function: 'management',
    access: 'management-read',
    summary: 'List workspaces',
    query: listPageParameters('workspaces'),
    ok: { status: 200, schema: ref('ListWorkspacesResponse') },
    errors: [400],
  },
  {
    operationId: 'createWorkspace',
    method: 'POST',
    path: '/workspaces',
    function: 'management',
    access: 'management-write',
    summary: 'Create one of the workspaces',
    body: ref('CreateWorkspaceRequest'),
    ok: { status: 201, schema: ref('CreateWorkspaceResponse') },
    errors: [400, 409],
  },
  {
    operationId: 'getWorkspace',
    method: 'GET',
    path: '/workspaces/{id}',
    function: 'management',
    access: 'management-read',
    summary: 'One of the workspaces',
    ok: { status: 200, schema: ref('GetWorkspaceResponse') },
    errors: [404],
  },
] as const satisfies readonly RouteDefinition[];
