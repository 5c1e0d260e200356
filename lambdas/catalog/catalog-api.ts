import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { authenticate, type AuthenticationDeps } from '../accounts/authenticate';
import type { Principal } from '../accounts/types';
import { NotFoundError } from '../errors';
import { presentedCredential, pathParameters, requestHost } from '../http/request';
import { json, rawJson } from '../http/responses';
import type { QueryString } from '../openapi/request-validation';
import { ROUTES, resourcePath, routeMethod, type OperationIdOf, type RouteDefinition } from '../routes';
import type { CatalogCache } from './catalog-cache';
import type { CatalogIndex } from './catalog-index';
import { nextPageLink, parseCatalogQuery, parseModelCountQuery, parseModelListQuery, type CatalogQuery } from './catalog-query';
import { OPEN_POLICY, loadCallerPolicy, regionForHost, type CallerPolicy } from './caller-policy';
import type { PercentileStats, ProviderEndpoint } from './types';

export interface CatalogApiDeps extends AuthenticationDeps {
  catalog: CatalogCache;
  regionalHostnames: Readonly<Record<string, string>>;
  /**
   * The public catalog's operations (`GET /models`, its count, one model, the providers) answer
   * callers without a credential too (`PUBLIC_CATALOG`). @default false: a key is needed
   */
  publicCatalog?: boolean;
}

/** What an operation of the catalog function gets: the request, whom it answers, and its query. */
interface CatalogRequest {
  event: APIGatewayProxyEvent;
  /** The caller's view (SPEC 4.1), or the whole catalog for the public catalog's operations. */
  policy: CallerPolicy;
  catalog: CatalogIndex;
  /** The query string as {@link CatalogOperation.query} parsed it, for the operations that read one. */
  query: CatalogQuery | undefined;
}

interface CatalogOperation {
  /** Parses the query string, before any I/O: a bad request costs nothing. */
  readonly query?: (queryString: QueryString) => CatalogQuery;
  readonly answer: (request: CatalogRequest) => APIGatewayProxyResult;
}

/** Each route's handler, bound by the operation id its declaration gives (lambdas/catalog/routes.ts). */
const OPERATIONS: { readonly [Id in OperationIdOf<'catalog'>]: CatalogOperation } = {
  getUserModels: { query: parseCatalogQuery, answer: listAnswer },
  getModels: { query: parseModelListQuery, answer: listAnswer },
  listModelsCount: {
    query: parseModelCountQuery,
    answer: ({ policy, catalog, query }) => rawJson(200, `{"data":{"count":${catalog.list(policy, query!).total}}}`),
  },
  getModel: {
    answer: ({ event, policy, catalog }) => {
      const { author, slug } = pathParameters(event);
      const model = catalog.modelJson(`${author}/${slug}`, policy);
      if (model === undefined) throw new NotFoundError(`Model ${author}/${slug} not found`);
      return rawJson(200, `{"data":${model}}`);
    },
  },
  listProviders: { answer: ({ catalog }) => rawJson(200, `{"data":${catalog.providersDataJson()}}`) },
  listEndpoints: { answer: endpointsAnswer },
};

/** The catalog function's routes by `METHOD resource`, the API Gateway resource template. */
const CATALOG_ROUTES: ReadonlyMap<string, RouteDefinition> = new Map(
  ROUTES.filter((route) => route.function === 'catalog').map((route) => [`${route.method} ${resourcePath(route)}`, route]),
);

/**
 * SPEC 4.1, the `links.details` resource, and the public catalog's operations. Handlers only
 * wire: find the route, parse its query, admit the caller, call the index, format.
 */
export function createCatalogApi(deps: CatalogApiDeps) {
  return async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
    const route = CATALOG_ROUTES.get(`${routeMethod(event.httpMethod)} ${event.resource}`);
    if (!route) throw new NotFoundError();
    const operation = OPERATIONS[route.operationId as OperationIdOf<'catalog'>];
    const query = operation.query?.(event);
    // Only an admitted caller makes the catalog load: a refused one costs its key read alone.
    const principal = await admit(event, route, deps);
    const [policy, catalog] = await Promise.all([callerPolicy(principal, event, deps), deps.catalog.get()]);
    return operation.answer({ event, policy, catalog, query });
  };
}

/**
 * Authenticates the caller; returns the one whose view the route answers, or undefined for
 * the whole catalog. The public catalog's routes take any valid credential, and none where
 * the deployment opens them; a credential that is sent is checked either way, so a revoked
 * key is refused there too.
 */
async function admit(event: APIGatewayProxyEvent, route: RouteDefinition, deps: CatalogApiDeps): Promise<Principal | undefined> {
  const credential = presentedCredential(event);
  if (route.access === 'catalog' && deps.publicCatalog && credential.authorization === undefined) return undefined;
  const principal = await authenticate(credential, deps);
  // The public catalog is the whole catalog, whoever asks: no caller's view to build.
  return route.access === 'catalog' ? undefined : principal;
}

/**
 * Whom the route answers: the per-caller routes (SPEC 4.1) narrow the catalog to the caller's
 * preferences, privacy settings, guardrails and regional hostname; the public catalog's
 * routes show it whole.
 */
function callerPolicy(principal: Principal | undefined, event: APIGatewayProxyEvent, deps: CatalogApiDeps): Promise<CallerPolicy> | CallerPolicy {
  if (!principal) return OPEN_POLICY;
  return loadCallerPolicy(principal, deps.accounts, regionForHost(requestHost(event), deps.regionalHostnames));
}

/** SPEC 2.10: a page of the list, its total and the link to the next page. */
function listAnswer({ event, policy, catalog, query }: CatalogRequest): APIGatewayProxyResult {
  const result = catalog.list(policy, query!);
  const next = nextPageLink(event.resource, query!, event.queryStringParameters, result.total);
  return rawJson(200, `{"data":${result.dataJson},"total_count":${result.total},"links":{"next":${JSON.stringify(next)}}}`);
}

/** A model's details and the endpoints serving it that the caller may reach. */
function endpointsAnswer({ event, policy, catalog }: CatalogRequest): APIGatewayProxyResult {
  const { author, slug } = pathParameters(event);
  const found = catalog.endpointsFor(`${author}/${slug}`, policy);
  if (!found) throw new NotFoundError(`Model ${author}/${slug} not found`);
  const { model, endpoints } = found;
  return json(200, {
    data: {
      id: model.id,
      name: model.name,
      created: model.created,
      description: model.description ?? '',
      architecture: {
        ...model.architecture,
        tokenizer: model.architecture.tokenizer ?? null,
        instruct_type: model.architecture.instruct_type ?? null,
      },
      endpoints: endpoints.map((endpoint) => publicEndpoint(endpoint, model.id, model.name)),
    },
  });
}

/** The public `PublicEndpoint` shape: internal policy and region fields stay inside. */
function publicEndpoint(endpoint: ProviderEndpoint, modelId: string, modelName: string) {
  const { dataPolicy: _policy, regions: _regions, ...rest } = endpoint;
  return {
    ...rest,
    supports_tool_choice: toolChoiceSupport(rest.supported_parameters),
    latency_last_30m: publicPercentiles(rest.latency_last_30m),
    throughput_last_30m: publicPercentiles(rest.throughput_last_30m),
    model_id: modelId,
    model_name: modelName,
  };
}

/**
 * Which `tool_choice` values the endpoint honours, as the official client expects: none
 * and auto come with tool calling; forcing a call (function, required) needs tool_choice.
 */
function toolChoiceSupport(parameters: readonly string[]) {
  const tools = parameters.includes('tools');
  const forced = tools && parameters.includes('tool_choice');
  return { auto: tools, function: forced, none: tools, required: forced };
}

/**
 * The public `PercentileStats` requires all four percentiles or is null as a whole; a
 * partial set (the seeded endpoints know only a median) is published as null.
 */
function publicPercentiles(stats: PercentileStats | null): PercentileStats | null {
  if (!stats || stats.p50 === null || stats.p75 === null || stats.p90 === null || stats.p99 === null) return null;
  return stats;
}
