import { randomId } from '../clock';
import { apiHandler } from '../http/middleware';
import { createInferenceApi } from '../inference/inference-api';
import { echoUpstream } from '../inference/upstream';
import { buildCatalogCache, buildDependencies } from './dependencies';

const deps = buildDependencies(process.env, ['keys', 'models']);
const catalog = buildCatalogCache(deps);

export const handler = apiHandler(
  createInferenceApi({
    accounts: deps.accounts,
    clock: deps.clock,
    catalog,
    regionalHostnames: deps.config.regionalHostnames,
    // Provider adapters are configured per deployment; the echo provider serves the local runtime.
    upstream: process.env.INFERENCE_UPSTREAM === 'echo' ? echoUpstream : null,
    newId: randomId,
  }),
);
