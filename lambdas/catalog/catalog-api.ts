import type { AuthenticationDeps } from '../credentials/authenticate';
import { NotFoundError } from '../errors';
import { createDispatcher, type Answer, type Operation, type Operations, type QueryParsers, type RouteOf, type RouteRequest } from '../http/dispatcher';
import { requestHost } from '../http/request';
import { resourcePath, type RouteDefinition } from '../route-definition';
import type { CatalogCache } from './catalog-cache';
import type { CatalogIndex } from './catalog-index';
import { nextPageLink, parseCatalogQuery, parseModelCountQuery, parseModelListQuery, type CatalogQuery } from './catalog-query';
import { OPEN_POLICY, loadCallerPolicy, regionForHost, type CallerPolicy } from './caller-policy';
import type { CatalogRoute } from './routes';
import type { PercentileStats, ProviderEndpoint } from './types';

/** What the catalog function's operations read: the authentication stores, the catalog cache and the regional hostnames. */
export interface CatalogApiDeps extends AuthenticationDeps {
  catalog: CatalogCache;
  regionalHostnames: Readonly<Record<string, string>>;
  /**
   * The public catalog's operations (`GET /models`, its count, one model, the providers) answer
   * callers without a credential too (`PUBLIC_CATALOG`). @default false: a key is needed
   */
  publicCatalog?: boolean;
}

/** The catalog's query parsers (catalog-query.ts), by operation id: each reads its parameters leniently where the listing rules say so (docs/reference.md#listing-rules). */
const QUERIES = {
  getUserModels: parseCatalogQuery,
  getModels: parseModelListQuery,
  listModelsCount: parseModelCountQuery,
} as const satisfies QueryParsers<Record<string, CatalogQuery>>;

type Queries = Record<keyof typeof QUERIES, CatalogQuery>;

/** What an operation of the catalog function gets: the admitted request, and the catalog in the caller's view. */
type CatalogRequest<Id extends CatalogRoute['operationId']> = RouteRequest<RouteOf<CatalogRoute, Id>, CatalogApiDeps, Queries> & {
  /** The caller's view (docs/reference.md#the-catalog), or the whole catalog for the public catalog's operations. */
  policy: CallerPolicy;
  catalog: CatalogIndex;
};

type CatalogOperations = { readonly [Id in CatalogRoute['operationId']]: Operation<CatalogRequest<Id>> };

/** Each route's operation, bound by the operation id its declaration gives (lambdas/catalog/routes.ts). */
const OPERATIONS: CatalogOperations = {
  getUserModels: listAnswer,
  getModels: listAnswer,
  listModelsCount: ({ policy, catalog, query }) => `{"data":{"count":${catalog.list(policy, query).total}}}`,
  getModel: ({ params: { author, slug }, policy, catalog }) => {
    const model = catalog.modelJson(`${author}/${slug}`, policy);
    if (model === undefined) throw new NotFoundError(`Model ${author}/${slug} not found`);
    return `{"data":${model}}`;
  },
  listProviders: ({ catalog }) => `{"data":${catalog.providersDataJson()}}`,
  listEndpoints: endpointsAnswer,
};

/**
 * docs/reference.md#the-catalog, the `links.details` resource, and the public catalog's operations, through the
 * dispatcher (lambdas/http/dispatcher.ts): find the route, parse its query before any I/O (a
 * bad request costs nothing), admit the caller, then load the caller's view of the catalog and
 * answer from it. Only an admitted caller makes the catalog load: a refused one costs its key
 * read alone.
 */
export function createCatalogApi(routes: readonly CatalogRoute[], deps: CatalogApiDeps) {
  return createDispatcher({
    routes,
    authentication: deps,
    publicCatalog: deps.publicCatalog,
    queries: QUERIES,
    queryFirst: true,
    operations: inCallerView(deps),
    deps,
  });
}

/** Each operation, once the caller's view and the catalog are loaded, side by side. */
function inCallerView(deps: CatalogApiDeps): Operations<CatalogRoute, CatalogApiDeps, Queries> {
  // Each operation takes the request of its own operation id, which the dispatcher hands it.
  const operations: Readonly<Record<string, (request: never) => Answer>> = OPERATIONS;
  const loading = Object.entries(operations).map(([id, operation]) => {
    const loaded = async (request: RouteRequest<RouteDefinition, CatalogApiDeps>) => {
      const [policy, catalog] = await Promise.all([callerPolicy(request), deps.catalog.get()]);
      return (operation as (request: object) => Answer)({ ...request, policy, catalog });
    };
    // Any operation's handler, whatever request it takes: what the dispatcher's table holds.
    return [id, loaded as (request: never) => Promise<Answer> | Answer] as const;
  });
  return Object.fromEntries(loading) as Operations<CatalogRoute, CatalogApiDeps, Queries>;
}

/**
 * Whom the route answers: the per-caller routes (docs/reference.md#the-catalog) narrow the catalog to the caller's
 * preferences, privacy settings, guardrails and regional hostname; the public catalog's
 * routes show it whole, whoever asks.
 */
function callerPolicy({ route, principal, event, deps }: RouteRequest<RouteDefinition, CatalogApiDeps>): Promise<CallerPolicy> | CallerPolicy {
  if (route.access === 'catalog' || !principal) return OPEN_POLICY;
  return loadCallerPolicy(principal, deps.accounts, regionForHost(requestHost(event), deps.regionalHostnames));
}

/** docs/reference.md#the-model-entry: a page of the list, its total and the link to the next page. */
function listAnswer({ route, event, policy, catalog, query }: CatalogRequest<'getUserModels' | 'getModels'>): string {
  const result = catalog.list(policy, query);
  const next = nextPageLink(resourcePath(route), query, event.queryStringParameters, result.total);
  return `{"data":${result.dataJson},"total_count":${result.total},"links":{"next":${JSON.stringify(next)}}}`;
}

/** A model's details and the endpoints serving it that the caller may reach. */
function endpointsAnswer({ params: { author, slug }, policy, catalog }: CatalogRequest<'listEndpoints'>) {
  const found = catalog.endpointsFor(`${author}/${slug}`, policy);
  if (!found) throw new NotFoundError(`Model ${author}/${slug} not found`);
  const { model, endpoints } = found;
  return {
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
  };
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
