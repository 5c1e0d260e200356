import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { authenticate, requireManagement } from '../accounts/authenticate';
import type { Principal } from '../accounts/types';
import { NotFoundError, TooManyRequestsError } from '../errors';
import { presentedCredential, jsonBody, pathParameters } from '../http/request';
import { queryValues, validated, type RequestValidator } from '../openapi/request-validation';
import { bodyValidators, queryValidators } from '../openapi/validators/management.generated';
import { ROUTES, resourcePath, routeMethod, type Access, type OperationIdOf, type RouteDefinition } from '../routes';
import type { ManagementDeps, Operation, OperationRequest } from './operation';
import { ACTIVITY_OPERATIONS } from './operations/activity';
import { CURRENT_KEY_OPERATIONS } from './operations/current-key';
import { EVENT_OPERATIONS } from './operations/events';
import { GUARDRAIL_OPERATIONS } from './operations/guardrails';
import { ISSUER_OPERATIONS } from './operations/issuers';
import { KEY_OPERATIONS } from './operations/keys';
import { POLICY_OPERATIONS } from './operations/policies';
import { WORKSPACE_OPERATIONS } from './operations/workspaces';

export type { ManagementDeps, RateDecision } from './operation';

/** The handler of every management route, bound by the operation id its declaration gives. */
const OPERATIONS: { readonly [Id in OperationIdOf<'management'>]: Operation<Id> } = {
  ...CURRENT_KEY_OPERATIONS,
  ...ACTIVITY_OPERATIONS,
  ...KEY_OPERATIONS,
  ...WORKSPACE_OPERATIONS,
  ...GUARDRAIL_OPERATIONS,
  ...ISSUER_OPERATIONS,
  ...POLICY_OPERATIONS,
  ...EVENT_OPERATIONS,
};

type BodyId = keyof typeof bodyValidators;
type QueryId = keyof typeof queryValidators;

/** The management routes by `METHOD resource`, the API Gateway resource template. */
const MANAGEMENT_ROUTES: ReadonlyMap<string, RouteDefinition> = new Map(
  ROUTES.filter((route) => route.function === 'management').map((route) => [`${route.method} ${resourcePath(route)}`, route]),
);

/** SPEC 4.5: what the route's declared access asks of the credential. */
function authorize(principal: Principal, access: Access): void {
  if (access === 'management-read') requireManagement(principal, 'read');
  else if (access === 'management-write') requireManagement(principal, 'write');
  else if (access !== 'any') throw new Error(`a management route cannot have access ${access}`);
}

/**
 * The management API: find the route, authenticate, check the credential against the route's
 * declared access, count a token verification against the per-address budget where the route
 * says it verifies subject tokens, validate the query string and body with the route's
 * schemas, then run its operation for the caller's organization only.
 */
export function createManagementApi(deps: ManagementDeps) {
  return async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
    const route = MANAGEMENT_ROUTES.get(`${routeMethod(event.httpMethod)} ${event.resource}`);
    if (!route) throw new NotFoundError();
    const principal = await authenticate(presentedCredential(event), deps);
    authorize(principal, route.access);
    const id = route.operationId as OperationIdOf<'management'>;
    if (route.verifiesSubjectTokens) {
      const rate = await deps.exchangeRate(event.requestContext.identity.sourceIp);
      if (!rate.allowed) throw new TooManyRequestsError('Too many token evaluations from this address; retry later', rate.retryAfterSeconds);
    }
    const query: unknown = route.query ? validated(queryValidators[id as QueryId] as RequestValidator<unknown>, queryValues(event, route.query)) : {};
    const body: unknown = route.body ? validated(bodyValidators[id as BodyId] as RequestValidator<unknown>, jsonBody(event)) : undefined;
    // Typed by operation id: the route declares the schemas the validators were compiled from.
    const operation = OPERATIONS[id] as (request: Omit<OperationRequest, 'query' | 'body'> & { query: unknown; body: unknown }) => Promise<APIGatewayProxyResult>;
    return operation({ principal, event, params: pathParameters(event), query, body, deps });
  };
}
