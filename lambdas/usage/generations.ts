import type { Principal } from '../accounts/types';
import type { UsageRecord } from './usage';

/**
 * One completion as `GET /generation?id=` reports it (docs/api.md, "Generations and request ids"): what was
 * asked of whom, what it cost and how long it took. Written beside the usage, kept
 * {@link GENERATION_RETENTION_DAYS} days.
 */
export interface GenerationRecord {
  /** `gen-…`: the `id` of every chunk of the answer, and its `X-Generation-Id`. */
  id: string;
  /** The request's `X-Request-Id`. */
  requestId: string;
  organizationId: string;
  /** The key it was charged to: the key itself, or the key an access token acted as. */
  keyHash: string;
  workspaceId: string | null;
  via: UsageRecord['via'];
  model: string;
  providerName: string;
  /** The provider's own id of its answer, when it sent one. */
  upstreamId: string | null;
  /** ISO 8601: when the request arrived. */
  createdAt: string;
  streamed: boolean;
  /** The client left before the answer ended. */
  cancelled: boolean;
  finishReason: string | null;
  promptTokens: number;
  completionTokens: number;
  reasoningTokens: number | null;
  cachedTokens: number | null;
  /** USD, exact decimal: what the key was charged. */
  cost: string;
  /** `provider_usage`: the usage the provider reported; `maximum_cost`: none came after it began to answer, and the most it could cost was charged. */
  chargeBasis?: 'provider_usage' | 'maximum_cost';
  /** Milliseconds from the request's arrival to the answer's end. */
  latencyMs: number;
  /** Milliseconds from the provider's first byte to the answer's end. */
  generationTimeMs: number | null;
  serviceTier: string | null;
  /** The request's `Origin`, `Referer` and `User-Agent`, and the body's `user`, shortened. */
  origin: string;
  httpReferer: string | null;
  userAgent: string | null;
  externalUser: string | null;
}

/** Where each completion's stats are kept, by generation id, for `GET /generation`. */
export interface GenerationStore {
  /** Records a completion; resolves once durable. */
  put(record: GenerationRecord): Promise<void>;
  get(id: string): Promise<GenerationRecord | undefined>;
}

/** How long a generation's stats are kept, in days; then they expire. */
export const GENERATION_RETENTION_DAYS = 30;

/** What a generation id looks like: `gen-` and the gateway's random id. Anything else is not one. */
export const GENERATION_ID = /^gen-[A-Za-z0-9_-]{8,64}$/;

/** The longest client-sent text a generation keeps (headers, the body's `user`): the item stays one write unit. */
export const GENERATION_TEXT_MAX = 200;

/** A client-sent value as a generation keeps it: at most {@link GENERATION_TEXT_MAX} characters. */
export function clientText(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value.slice(0, GENERATION_TEXT_MAX) : null;
}

/**
 * Who may read a generation: the key that made it (or an access token acting as it), and the
 * management keys of its organization. Anyone else meets a 404, as for an id that never was.
 */
export function mayReadGeneration(principal: Principal, record: GenerationRecord): boolean {
  if (principal.organization.id !== record.organizationId) return false;
  return principal.key.hash === record.keyHash || principal.key.kind === 'management';
}

/** The public `GenerationResponse` data, and the key it was charged to (`api_key_hash`). */
export function publicGeneration(record: GenerationRecord): Record<string, unknown> {
  const cost = Number(record.cost);
  return {
    id: record.id,
    upstream_id: record.upstreamId,
    total_cost: cost,
    cache_discount: null,
    upstream_inference_cost: null,
    created_at: record.createdAt,
    model: record.model,
    app_id: null,
    streamed: record.streamed,
    cancelled: record.cancelled,
    provider_name: record.providerName,
    latency: record.latencyMs,
    moderation_latency: null,
    generation_time: record.generationTimeMs,
    finish_reason: record.finishReason,
    service_tier: record.serviceTier,
    tokens_prompt: record.promptTokens,
    tokens_completion: record.completionTokens,
    native_tokens_prompt: record.promptTokens,
    native_tokens_completion: record.completionTokens,
    native_tokens_completion_images: null,
    native_tokens_reasoning: record.reasoningTokens,
    native_tokens_cached: record.cachedTokens,
    num_media_prompt: null,
    num_input_audio_prompt: null,
    num_media_completion: null,
    num_search_results: null,
    num_fetches: null,
    web_search_engine: null,
    origin: record.origin,
    usage: cost,
    is_byok: false,
    native_finish_reason: record.finishReason,
    external_user: record.externalUser,
    api_type: 'completions',
    preset_id: null,
    router: null,
    provider_responses: null,
    user_agent: record.userAgent,
    http_referer: record.httpReferer,
    data_region: 'global',
    workspace_id: record.workspaceId,
    request_id: record.requestId,
    session_id: null,
    response_cache_source_id: null,
    api_key_hash: record.keyHash,
    charge_basis: record.chargeBasis ?? 'provider_usage',
  };
}
