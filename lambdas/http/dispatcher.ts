/**
 * The one dispatcher of every function that serves API or page routes, in the shape of
 * oidc-provider's token action: the function's entry hands it the routes it serves
 * (lambdas/routes.ts `routesOf`) and one operation per operation id; a request is matched to its
 * route, its credential admitted against the route's `access`, its query and body checked by the
 * route's compiled schemas, and the operation's result answered with the route's status.
 *
 * @example
 * const dispatch = createDispatcher({ routes: routesOf('settingsPage'), operations, deps });
 *
 * The token endpoint speaks OAuth and has its own handler (lambdas/oauth/exchange-token.ts).
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { authenticate, requireInference, requireManagement, type AuthenticationDeps } from '../credentials/authenticate';
import type { Principal } from '../accounts/types';
import { NotFoundError, TooManyRequestsError } from '../errors';
import { queryValues, validated, type QueryString, type RequestValidator } from '../openapi/request-validation';
import { resourcePath, routeMethod, type Access, type RouteDefinition } from '../route-definition';
import { jsonBody, pathParameters, presentedCredential } from './request';
import { json, rawJson } from './responses';

/** What an address-rate check answers: allowed, or when to retry (whole seconds). */
export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

/** A body of another media type than JSON (a page, a script), with headers of its own. */
export class Representation {
  constructor(
    readonly body: string,
    readonly contentType: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {}
}

/**
 * What an operation returns: a value answered as JSON, a JSON body already serialized (the
 * catalog builds its hot answers by hand), a {@link Representation}, or nothing (204).
 */
export type Answer = Representation | string | object | undefined;

/** SuccessResponse.cacheable: caches may keep the answer briefly (RFC 9111 §5.2.2). */
const CACHEABLE_HEADERS: Readonly<Record<string, string>> = { 'Cache-Control': 'public, max-age=300' };

/** Who calls a route of this access: nobody known on public routes; maybe nobody on the public catalog. */
export type PrincipalOf<A extends Access> = A extends 'public' ? undefined : A extends 'catalog' ? Principal | undefined : Principal;

/** A route's query parser, by operation id: what the operation gets as `query`. */
export type QueryParsers<Queries> = { readonly [Id in keyof Queries]: (query: QueryString) => Queries[Id] };
/** A route's compiled body or query schema, by operation id (lambdas/openapi/validators/). */
export type CompiledSchemas<Values> = { readonly [Id in keyof Values]: RequestValidator<Values[Id]> };

/** A request the route's access admits and its schemas accept, typed by the route's declaration `R`. */
export interface AdmittedRequest<R extends RouteDefinition = RouteDefinition, Queries = {}, Bodies = {}> {
  readonly route: RouteDefinition;
  readonly principal: PrincipalOf<R['access']>;
  /** Path parameters, decoded. */
  readonly params: Record<string, string>;
  /** The declared query parameters, as the route's query parser read them. */
  readonly query: R['operationId'] extends keyof Queries ? Queries[R['operationId']] : Record<string, never>;
  /** The JSON body, as the route's schema accepted it. */
  readonly body: R['operationId'] extends keyof Bodies ? Bodies[R['operationId']] : undefined;
  readonly event: APIGatewayProxyEvent;
}

/** What a function's dispatcher admits requests with: its routes, how it reads credentials, and its query and body parsers. */
export interface AdmissionOptions<R extends RouteDefinition, Queries = {}, Bodies = {}> {
  /** The routes served, as the function's entry wires them (lambdas/routes.ts `routesOf`). */
  readonly routes: readonly R[];
  /** Reads credentials; needed by a function with a route that is not public. */
  readonly authentication?: AuthenticationDeps;
  /** The parser of each route that declares a query string. */
  readonly queries?: QueryParsers<Queries>;
  /** The compiled schema of each route that declares a JSON body. */
  readonly bodies?: CompiledSchemas<Bodies>;
  /** @default 64 KiB */
  readonly maxBodyBytes?: number;
  /** Counts one hit against the token endpoint's per-address limit: needed by a route that verifies subject tokens. */
  readonly exchangeRate?: (sourceIp: string) => Promise<RateDecision>;
  /** The public catalog's routes (access `catalog`) answer callers without a credential too. @default false */
  readonly publicCatalog?: boolean;
  /**
   * Parses the query string before the credential is read, so a bad request costs no I/O (the
   * catalog). @default false: the credential first, then the query and the body
   */
  readonly queryFirst?: boolean;
}

/**
 * The front half of the dispatcher: finds the route, admits the caller, and parses the query
 * and body, in the order {@link AdmissionOptions.queryFirst} says. A request that no route of
 * the function serves is a 404.
 */
export function requestAdmission<R extends RouteDefinition, Queries = {}, Bodies = {}>(
  options: AdmissionOptions<R, Queries, Bodies>,
): (event: APIGatewayProxyEvent) => Promise<AdmittedRequest<R, Queries, Bodies>> {
  const routes = servedRoutes(options);
  const queries = (options.queries ?? {}) as Readonly<Record<string, (query: QueryString) => unknown>>;
  const bodies = (options.bodies ?? {}) as Readonly<Record<string, RequestValidator<unknown>>>;
  return async (event) => {
    const route = routes.get(routeKey(routeMethod(event.httpMethod), event.resource));
    if (!route) throw new NotFoundError();
    const parseQuery = () => (route.query ? queries[route.operationId]!(event) : {});
    const early = options.queryFirst ? parseQuery() : undefined;
    const principal = await admit(event, route, options);
    if (route.verifiesSubjectTokens) await countVerification(event, options.exchangeRate!);
    const query = options.queryFirst ? early : parseQuery();
    const body = route.body ? validated(bodies[route.operationId]!, jsonBody(event, options.maxBodyBytes)) : undefined;
    // Typed by operation id: the route declares the schemas its parsers and validators read.
    return { route, principal, params: pathParameters(event), query, body, event } as AdmittedRequest<R, Queries, Bodies>;
  };
}

/** What an operation gets: the admitted request and the function's dependencies. */
export type RouteRequest<R extends RouteDefinition, Deps, Queries = {}, Bodies = {}> = AdmittedRequest<R, Queries, Bodies> & { readonly deps: Deps };

/** The declaration among routes `R` of operation `Id`. */
export type RouteOf<R extends RouteDefinition, Id> = Extract<R, { operationId: Id }>;

/** One route's handler: call one domain function and return its result: handlers only wire. */
export type Operation<Request> = (request: Request) => Promise<Answer> | Answer;

/** The operations of routes `R`, one per operation id their declarations give. */
export type Operations<R extends RouteDefinition, Deps, Queries = {}, Bodies = {}> = {
  readonly [Id in R['operationId']]: Operation<RouteRequest<RouteOf<R, Id>, Deps, Queries, Bodies>>;
};

/** What {@link createDispatcher} takes: the routes, their operations and what those depend on. */
export interface DispatcherOptions<R extends RouteDefinition, Deps, Queries = {}, Bodies = {}> extends AdmissionOptions<R, Queries, Bodies> {
  readonly operations: Operations<R, Deps, Queries, Bodies>;
  readonly deps: Deps;
}

/** The whole dispatcher: the front half, the operation named by the route, and its answer. */
export function createDispatcher<R extends RouteDefinition, Deps, Queries = {}, Bodies = {}>(
  options: DispatcherOptions<R, Deps, Queries, Bodies>,
): (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult> {
  const admitted = requestAdmission(options);
  // Each operation takes the request of its own operation id, which the route found names.
  const operations = options.operations as unknown as Readonly<Record<string, (request: object) => Promise<Answer> | Answer>>;
  return async (event) => {
    const request = await admitted(event);
    const operation = operations[request.route.operationId]!;
    return answer(request.route, await operation({ ...request, deps: options.deps }));
  };
}

/** The route's declared success status and caching, around what its operation returned. */
function answer(route: Pick<RouteDefinition, 'ok'>, result: Answer): APIGatewayProxyResult {
  const { status, cacheable } = route.ok;
  const headers = cacheable ? CACHEABLE_HEADERS : {};
  if (result === undefined) return { statusCode: status, headers: { ...headers }, body: '' };
  if (result instanceof Representation) return { statusCode: status, headers: { 'Content-Type': result.contentType, ...headers, ...result.headers }, body: result.body };
  return typeof result === 'string' ? rawJson(status, result, headers) : json(status, result, headers);
}

/**
 * Each route's query parser from its compiled schema (lambdas/openapi/validators/): the values
 * of the parameters the route declares, as lambdas/openapi/request-validation.ts reads them.
 */
export function compiledQueries<Queries>(routes: readonly RouteDefinition[], validators: CompiledSchemas<Queries>): QueryParsers<Queries> {
  const parsers = Object.entries(validators as Readonly<Record<string, RequestValidator<unknown>>>).map(([id, validate]) => {
    const parameters = routes.find((route) => route.operationId === id)?.query;
    if (!parameters) throw new Error(`No route ${id} declares a query string`);
    return [id, (query: QueryString) => validated(validate, queryValues(query, parameters))] as const;
  });
  return Object.fromEntries(parsers) as QueryParsers<Queries>;
}

/** How logs and metrics name a request's route: its method and API Gateway resource template. */
export function routeLabel(event: Pick<APIGatewayProxyEvent, 'httpMethod' | 'resource'>): string {
  return `${event.httpMethod} ${event.resource}`;
}

const routeKey = (method: string, resource: string) => `${method} ${resource}`;

/**
 * The function's routes by method and resource. Fails the cold start when a route needs what
 * the function did not give: a credential reader, a query parser, a body schema, the budget.
 */
function servedRoutes(options: AdmissionOptions<RouteDefinition, unknown, unknown>): ReadonlyMap<string, RouteDefinition> {
  const served = options.routes;
  const missing = (route: RouteDefinition): string | undefined => {
    if (route.form) return 'a form body, which only the token endpoint reads';
    if (route.access !== 'public' && !options.authentication) return 'a credential reader';
    if (route.query && !Object.hasOwn(options.queries ?? {}, route.operationId)) return 'a query parser';
    if (route.body && !Object.hasOwn(options.bodies ?? {}, route.operationId)) return 'a body schema';
    if (route.verifiesSubjectTokens && !options.exchangeRate) return 'the per-address exchange budget';
    return undefined;
  };
  for (const route of served) {
    const need = missing(route);
    if (need) throw new Error(`Route ${route.operationId} of the ${route.function} function needs ${need}`);
  }
  return new Map(served.map((route) => [routeKey(route.method, resourcePath(route)), route]));
}

/**
 * docs/reference.md#scopes-and-access: the caller, checked against the route's access. The public catalog takes any
 * valid credential, and none where the deployment opens it; a credential that is sent is
 * checked either way, so a revoked key is refused there too.
 */
async function admit(event: APIGatewayProxyEvent, route: RouteDefinition, options: AdmissionOptions<RouteDefinition, unknown, unknown>): Promise<Principal | undefined> {
  if (route.access === 'public') return undefined;
  const credential = presentedCredential(event, route.keyHeader);
  if (route.access === 'catalog' && options.publicCatalog && credential.authorization === undefined) return undefined;
  const principal = await authenticate(credential, options.authentication!);
  if (route.access === 'inference') requireInference(principal);
  else if (route.access === 'management-read') requireManagement(principal, 'read');
  else if (route.access === 'management-write') requireManagement(principal, 'write');
  return principal;
}

/** docs/reference.md#oauth-errors, docs/reference.md#limits: a route that verifies subject tokens as the exchange does shares its per-address budget. */
async function countVerification(event: APIGatewayProxyEvent, exchangeRate: (sourceIp: string) => Promise<RateDecision>): Promise<void> {
  const rate = await exchangeRate(event.requestContext.identity.sourceIp);
  if (!rate.allowed) throw new TooManyRequestsError('Too many token evaluations from this address; retry later', rate.retryAfterSeconds);
}
