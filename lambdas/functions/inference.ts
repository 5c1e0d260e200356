import { streamingHandler } from '../http/streaming';
import { createInferenceApi } from '../inference/inference-api';
import { buildCatalogCache, buildDependencies, buildUpstreamOptions } from './dependencies';

const deps = buildDependencies(process.env, ['keys', 'models']);

/** A streaming function: API Gateway relays its bytes as they are written (`responseTransferMode: STREAM`). */
export const handler = streamingHandler(
  createInferenceApi({
    accounts: deps.accounts,
    clock: deps.clock,
    catalog: buildCatalogCache(deps),
    regionalHostnames: deps.config.regionalHostnames,
    upstream: buildUpstreamOptions(deps),
  }),
);
