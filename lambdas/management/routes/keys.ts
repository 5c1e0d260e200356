import { KEYS_PAGE } from '../../accounts/types';
import { invalid, ref } from '../../openapi/json-schema';
import type { RouteDefinition } from '../../route-definition';
import { listPageParameters } from '../list-page';

/** API keys of the organization (public `/keys`; docs/reference.md#keys-and-credentials). */
export const KEY_ROUTES = [
  {
    operationId: 'listKeys',
    method: 'GET',
    path: '/keys',
    function: 'management',
    access: 'management-read',
    summary: "List API keys: a workspace's keys (the default workspace's unless one is named), or every key on request",
    query: [
      { name: 'include_disabled', schema: { type: 'boolean', ...invalid('must be true or false') }, description: 'Include disabled keys; false when absent.' },
      {
        name: 'offset',
        // Integer or null, as in the public document; `null` means not given (an empty value is refused).
        schema: listPageParameters('keys')[0].schema,
        description: `The keys to skip (oldest first), at least 0; the next ${KEYS_PAGE.toLocaleString('en-US')} at most come back.`,
      },
      {
        name: 'workspace_id',
        schema: { type: 'string', format: 'uuid' },
        description: "Only keys of this workspace. By default, keys in the organization's default workspace are returned.",
      },
      {
        name: 'include_management',
        schema: { type: 'boolean', ...invalid('must be true or false') },
        // The public list holds one workspace's keys, never a management key.
        description:
          "modelgate: without workspace_id, list every key of the organization, every workspace's and the management keys (whose `workspace_id` names the default workspace: they belong to none); false when absent.",
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
