import type { FunctionRequirements } from '../config';
import { apiHandler } from '../http/middleware';
import { createInferenceApi, type InferenceApiDeps } from '../inference/inference-api';
import type { Telemetry } from '../observability/telemetry';

/** SPEC 4.5: API keys and the catalog, read-only, and an upstream chosen by configuration. */
export const INFERENCE_FUNCTION = {
  tables: ['keys', 'models'],
  settings: ['inferenceUpstream'],
} as const satisfies FunctionRequirements;

export interface InferenceHandlerDeps extends InferenceApiDeps {
  telemetry: Telemetry;
}

/** `POST /chat/completions`. */
export function createInferenceHandler(deps: InferenceHandlerDeps) {
  return apiHandler(createInferenceApi(deps), deps.telemetry);
}
