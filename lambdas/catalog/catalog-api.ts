import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { authenticate, type AuthenticationDeps } from '../accounts/authenticate';
import { NotFoundError } from '../errors';
import { presentedCredential, pathParameters, requestHost } from '../http/request';
import { json, rawJson } from '../http/responses';
import { API_BASE_PATH } from '../routes';
import type { CatalogCache } from './catalog-cache';
import { nextPageLink, parseCatalogQuery } from './catalog-query';
import { loadCallerPolicy, regionForHost } from './caller-policy';
import type { PercentileStats, ProviderEndpoint } from './types';

export interface CatalogApiDeps extends AuthenticationDeps {
  catalog: CatalogCache;
  regionalHostnames: Readonly<Record<string, string>>;
}

const LIST_PATH = `${API_BASE_PATH}/models/user`;

/** SPEC 4.1 and the `links.details` resource. Handlers only wire: parse, call, format. */
export function createCatalogApi(deps: CatalogApiDeps) {
  return async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
    // Validate the query before any I/O: a bad request costs nothing.
    const isList = event.resource === LIST_PATH;
    const query = isList ? parseCatalogQuery(event) : undefined;
    const principal = await authenticate(presentedCredential(event), deps);
    const [policy, catalog] = await Promise.all([
      loadCallerPolicy(principal, deps.accounts, regionForHost(requestHost(event), deps.regionalHostnames)),
      deps.catalog.get(),
    ]);

    if (query) {
      const result = catalog.list(policy, query);
      const next = nextPageLink(LIST_PATH, query, event.queryStringParameters, result.total);
      return rawJson(200, `{"data":${result.dataJson},"total_count":${result.total},"links":{"next":${JSON.stringify(next)}}}`);
    }

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
