import { WORKSPACE_SLUG } from '../../accounts/types';
import { ref } from '../../openapi/json-schema';
import type { RouteDefinition } from '../../route-definition';
import { listPageParameters } from '../list-page';

/**
 * `{id}` of `/workspaces/{id}`: the workspace's id or its slug, as in the public document. A
 * lowercase UUID has the shape of a slug too; a value that is both names the workspace with that id
 * first.
 */
export const WORKSPACE_ID_OR_SLUG = {
  id: {
    type: 'string',
    pattern: WORKSPACE_SLUG.source,
    maxLength: 64,
    description: 'The workspace ID (UUID) or slug',
    example: 'production',
  },
} as const;

/** Workspaces of the organization (public `/workspaces`; docs/reference.md#organizations-workspaces-and-guardrails). */
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
    summary: 'One of the workspaces, by its id or its slug',
    pathParameters: WORKSPACE_ID_OR_SLUG,
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
    summary: 'Update one of the workspaces (by its id or its slug): its name, slug or description',
    pathParameters: WORKSPACE_ID_OR_SLUG,
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
    summary: "Delete one of the workspaces (by its id or its slug), and its guardrails; it must hold no API key, and the organization's default workspace stays",
    pathParameters: WORKSPACE_ID_OR_SLUG,
    ok: { status: 200, schema: ref('DeleteWorkspaceResponse') },
    // 400: it holds API keys; 403: the organization's default workspace; 409: it holds the place
    // of a key whose write has not finished (docs/operating.md).
    errors: [400, 404, 409],
  },
] as const satisfies readonly RouteDefinition[];
