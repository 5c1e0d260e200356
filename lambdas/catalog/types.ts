/**
 * Catalog types. `PublicModel` is the wire shape of docs/reference.md#the-model-entry (the public API's wire names);
 * `ProviderEndpoint` and `CatalogEntry` are what the gateway keeps about each model to
 * compute one caller's view of it.
 */

export type InputModality = 'text' | 'image' | 'file' | 'audio' | 'video';

/** docs/reference.md#the-model-entry: what a model may produce. */
export const OUTPUT_MODALITIES = [
  'text',
  'image',
  'embeddings',
  'audio',
  'video',
  'rerank',
  'decisions',
  'speech',
  'transcription',
] as const;
/** One output modality; `GET /models/user` lists text models unless asked for others. */
export type OutputModality = (typeof OUTPUT_MODALITIES)[number];

/** docs/reference.md#the-model-entry: the values a model's `supported_parameters` may hold. */
export const SUPPORTED_PARAMETERS = [
  'temperature',
  'top_p',
  'top_k',
  'min_p',
  'top_a',
  'frequency_penalty',
  'presence_penalty',
  'repetition_penalty',
  'max_tokens',
  'max_completion_tokens',
  'logit_bias',
  'logprobs',
  'top_logprobs',
  'prediction',
  'seed',
  'response_format',
  'structured_outputs',
  'stop',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'include_reasoning',
  'reasoning',
  'reasoning_effort',
  'web_search_options',
  'verbosity',
] as const;
/** One request parameter a model may support. */
export type SupportedParameter = (typeof SUPPORTED_PARAMETERS)[number];

/** The use-case categories of the public catalog (`GET /models?category=`). */
export const MODEL_CATEGORIES = [
  'programming',
  'roleplay',
  'marketing',
  'marketing/seo',
  'technology',
  'science',
  'translation',
  'legal',
  'finance',
  'health',
  'trivia',
  'academia',
] as const;
/** One use-case category. */
export type ModelCategory = (typeof MODEL_CATEGORIES)[number];

/** What a model takes and produces: its input and output modalities, tokenizer and instruction format. */
export interface ModelArchitecture {
  modality: string | null;
  input_modalities: InputModality[];
  output_modalities: OutputModality[];
  instruct_type?: string | null;
  tokenizer?: string;
}

/** docs/reference.md#pricing-and-cost: price keys that an override may replace. */
export const OVERRIDABLE_PRICE_KEYS = [
  'prompt',
  'completion',
  'audio',
  'input_audio_cache',
  'input_cache_read',
  'input_cache_write',
  'input_cache_write_1h',
] as const;
/** One price key an override may replace. */
export type OverridablePriceKey = (typeof OVERRIDABLE_PRICE_KEYS)[number];

/** docs/reference.md#pricing-and-cost: every price key a pricing may hold, in the order prices are returned. */
export const PRICE_KEYS = [
  'prompt',
  'completion',
  'request',
  'image',
  'image_output',
  'image_token',
  'audio',
  'audio_output',
  'input_audio_cache',
  'input_cache_read',
  'input_cache_write',
  'input_cache_write_1h',
  'internal_reasoning',
  'web_search',
] as const;
/** One price key. */
export type PriceKey = (typeof PRICE_KEYS)[number];

/** The weekdays an override's `utc_days` may name, in `Date.getUTCDay` order. */
export const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'] as const;
/** One weekday of `utc_days`. */
export type Weekday = (typeof WEEKDAYS)[number];

/** A conditional price (docs/reference.md#pricing-and-cost rules 1 to 3): the prices it replaces, and when it applies. */
export type PricingOverride = Partial<Record<OverridablePriceKey, string>> & {
  min_prompt_tokens?: number;
  utc_start?: number;
  utc_end?: number;
  utc_days?: Weekday[];
};

/** A model's or an endpoint's `pricing`: decimal USD strings per unit under default conditions, a discount and overrides. */
export type PublicPricing = { prompt: string; completion: string } & Partial<
  Record<Exclude<PriceKey, 'prompt' | 'completion'>, string>
> & {
    discount?: number;
    overrides?: PricingOverride[];
  };

/** The limits of a model's top provider: its context, its longest completion and whether it moderates. */
export interface TopProviderInfo {
  is_moderated: boolean;
  context_length?: number | null;
  max_completion_tokens?: number | null;
}

/** A model's rating in one category of a design arena; the arena sort reads the best. */
export interface ArenaEntry {
  arena: string;
  category: string;
  elo: number;
  win_rate: number;
  rank: number;
}

/** A model's third-party scores: the three indices and the arena ratings the index and arena sorts read. */
export interface ModelBenchmarks {
  artificial_analysis?: {
    intelligence_index: number | null;
    coding_index: number | null;
    agentic_index: number | null;
  };
  design_arena: ArenaEntry[];
}

/** A reasoning effort a model may take, or default to. */
export type ReasoningEffort = 'max' | 'xhigh' | 'high' | 'medium' | 'low' | 'minimal' | 'none' | null;

/** A reasoning model's options: whether reasoning is mandatory or on by default, and which efforts it takes. */
export interface ModelReasoning {
  mandatory: boolean;
  default_enabled?: boolean;
  default_effort?: ReasoningEffort;
  supported_efforts?: ReasoningEffort[] | null;
  supports_max_tokens?: boolean;
}

/** A model entry as the catalog answers it (docs/reference.md#the-model-entry). */
export interface PublicModel {
  id: string;
  canonical_slug: string;
  hugging_face_id?: string | null;
  name: string;
  created: number;
  description?: string;
  context_length: number | null;
  architecture: ModelArchitecture;
  pricing: PublicPricing;
  top_provider: TopProviderInfo;
  per_request_limits: { prompt_tokens: number; completion_tokens: number } | null;
  supported_parameters: string[];
  default_parameters: Record<string, number | null> | null;
  supported_voices: string[] | null;
  links: { details: string };
  alias_target?: { slug: string; name: string };
  benchmarks?: ModelBenchmarks;
  expiration_date?: string | null;
  knowledge_cutoff?: string | null;
  reasoning?: ModelReasoning;
}

/** Percentiles of an endpoint's recent latency or throughput; null where unmeasured. */
export interface PercentileStats {
  p50: number | null;
  p75: number | null;
  p90: number | null;
  p99: number | null;
}

/** What a provider does with prompts sent through one endpoint. */
export interface DataPolicy {
  /** The provider may train on prompts. */
  training: boolean;
  /** The provider retains prompts (for abuse monitoring or otherwise). */
  retainsPrompts: boolean;
  /** Zero data retention: nothing is stored after the response. */
  zeroDataRetention: boolean;
}

/** One provider's offer of a model (public shape `PublicEndpoint` plus policy and regions). */
export interface ProviderEndpoint {
  /** Provider slug, e.g. `anthropic`; what provider preferences and guardrails name. */
  tag: string;
  provider_name: string;
  name: string;
  quantization: string;
  context_length: number;
  max_completion_tokens: number | null;
  max_prompt_tokens: number | null;
  pricing: PublicPricing;
  supported_parameters: string[];
  is_moderated: boolean;
  status: number;
  uptime_last_30m: number | null;
  uptime_last_5m: number | null;
  uptime_last_1d: number | null;
  supports_implicit_caching: boolean;
  latency_last_30m: PercentileStats | null;
  throughput_last_30m: PercentileStats | null;
  dataPolicy: DataPolicy;
  /** Regions where this endpoint can serve in-region (e.g. `eu`, `us`). */
  regions: string[];
}

/**
 * A model as the gateway stores it: the public entry, its endpoints in routing-preference
 * order (first is preferred), and the usage figures that two sorts read.
 */
export interface CatalogEntry {
  model: PublicModel;
  endpoints: ProviderEndpoint[];
  /** Requests in the recent window; `most-popular` sorts by it. */
  popularity: number;
  /** Tokens processed in the last week; `top-weekly` sorts by it. */
  weeklyTokens: number;
  /**
   * The use cases the operator files the model under (`ops catalog import`), which
   * `GET /models?category=` selects by; none when absent.
   */
  categories?: ModelCategory[];
}

/** Requests and tokens per model over a recent window: what the catalog's usage sorts read. */
export type ModelUsage = ReadonlyMap<string, { requests: number; tokens: number }>;
