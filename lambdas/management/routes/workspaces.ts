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

/**
 * Changing and deleting workspaces (public `updateWorkspace`, `deleteWorkspace`): declared after
 * the routes above, at the end of the registry (lambdas/routes.ts says why).
 */
export const WORKSPACE_CHANGE_ROUTES = [
  {
    operationId: 'updateWorkspace',
    method: 'PATCH',
    path: '/workspaces/{id}',
    function: 'management',
    access: 'management-write',
    summary: 'Update one of the workspaces: its name, slug or description',
    body: ref('UpdateWorkspaceRequest'),
    ok: { status: 200, schema: ref('UpdateWorkspaceResponse') },
    // 409: the slug is another workspace's.
    errors: [400, 404, 409],
  },
  {
    operationId: 'deleteWorkspace',
    method: 'DELETE',
    path: '/workspaces/{id}',
    function: 'management',
    access: 'management-write',
    summary: "Delete one of the workspaces, and its guardrails; it must hold no API key, and the organization's default workspace stays",
    ok: { status: 200, schema: ref('DeleteWorkspaceResponse') },
    // 400: it holds API keys; 403: the organization's default workspace.
    errors: [400, 404],
  },
] as const satisfies readonly RouteDefinition[];
