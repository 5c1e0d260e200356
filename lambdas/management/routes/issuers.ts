import { ref } from '../../openapi/json-schema';
import type { RouteDefinition } from '../../route-definition';

/** Trusted workload identity issuers (docs/reference.md#issuers). */
export const ISSUER_ROUTES = [
  {
    operationId: 'listWorkloadIdentityIssuers',
    method: 'GET',
    path: '/workload-identity/issuers',
    function: 'management',
    access: 'management-read',
    summary: 'List trusted workload identity issuers',
    ok: { status: 200, schema: ref('ListIssuersResponse') },
  },
  {
    operationId: 'createIssuer',
    method: 'POST',
    path: '/workload-identity/issuers',
    function: 'management',
    access: 'management-write',
    summary: 'Create one of the trusted workload identity issuers',
    body: ref('CreateIssuerRequest'),
    ok: { status: 201, schema: ref('IssuerResponse') },
    errors: [400, 409],
  },
  {
    operationId: 'getIssuer',
    method: 'GET',
    path: '/workload-identity/issuers/{id}',
    function: 'management',
    access: 'management-read',
    summary: 'One of the trusted workload identity issuers',
    ok: { status: 200, schema: ref('IssuerResponse') },
    errors: [404],
  },
  {
    operationId: 'updateIssuer',
    method: 'PATCH',
    path: '/workload-identity/issuers/{id}',
    function: 'management',
    access: 'management-write',
    summary: 'Update one of the trusted workload identity issuers',
    body: ref('UpdateIssuerRequest'),
    ok: { status: 200, schema: ref('IssuerResponse') },
    errors: [400, 404, 409],
  },
  {
    operationId: 'deleteIssuer',
    method: 'DELETE',
    path: '/workload-identity/issuers/{id}',
    function: 'management',
    access: 'management-write',
    summary: 'Delete one of the trusted workload identity issuers',
    ok: { status: 200, schema: ref('DeletedResponse') },
    errors: [404],
  },
] as const satisfies readonly RouteDefinition[];
