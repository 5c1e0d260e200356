import { invalid, ref } from '../../openapi/json-schema';
import type { RouteDefinition } from '../../route-definition';

/** API keys of the organization (public `/keys`; SPEC 2.2). */
export const KEY_ROUTES = [
  {
    operationId: 'listKeys',
    method: 'GET',
    path: '/keys',
    function: 'management',
    access: 'management-read',
    summary: 'List API keys: the workspace and personal keys, and the management keys on request',
    query: [
      { name: 'include_disabled', schema: { type: 'boolean', ...invalid('must be true or false') }, description: 'Include disabled keys; false when absent.' },
      { name: 'workspace_id', schema: { type: 'string', format: 'uuid' }, description: 'Only keys of this workspace.' },
      {
        name: 'include_management',
        schema: { type: 'boolean', ...invalid('must be true or false') },
        // The public list holds workspace keys only: its `workspace_id` is never null.
        description: 'modelgate: also list the management keys, which belong to no workspace (`workspace_id` null); false when absent.',
      },
    ],
    ok: { status: 200, schema: ref('ListKeysResponse') },
    errors: [400],
  },
  {
    operationId: 'createKey',
    method: 'POST',
    path: '/keys',
    function: 'management',
    access: 'management-write',
    summary: 'Create one of the API keys',
    body: ref('CreateKeyRequest'),
    ok: { status: 201, schema: ref('CreateKeyResponse') },
    // 404: the named workspace does not exist.
    errors: [400, 404, 409],
  },
  {
    operationId: 'getKey',
    method: 'GET',
    path: '/keys/{hash}',
    function: 'management',
    access: 'management-read',
    summary: 'One of the API keys',
    ok: { status: 200, schema: ref('ApiKeyResponse') },
    errors: [404],
  },
  {
    operationId: 'updateKey',
    method: 'PATCH',
    path: '/keys/{hash}',
    function: 'management',
    access: 'management-write',
    summary: 'Update one of the API keys',
    body: ref('UpdateKeyRequest'),
    ok: { status: 200, schema: ref('ApiKeyResponse') },
    errors: [400, 404, 409],
  },
  {
    operationId: 'deleteKey',
    method: 'DELETE',
    path: '/keys/{hash}',
    function: 'management',
    access: 'management-write',
    summary: 'Delete one of the API keys',
    ok: { status: 200, schema: ref('DeletedResponse') },
    errors: [404],
  },
] as const satisfies readonly RouteDefinition[];
