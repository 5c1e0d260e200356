/**
 * The shapes of the seed's source files: `data/endpoints-excerpt.json` (real endpoint records)
 * and `data/model-stats.json` (per-model statistics), as the catalog seed reads them.
 */
import type { ProviderEndpoint } from '../lambdas/catalog/types';

/**
 * One record of `data/endpoints-excerpt.json`: an OpenRouter `PublicEndpoint` (the catalog's
 * endpoint without what the gateway adds to it) plus bookkeeping. Its `pricing` is as published:
 * prices already have `discount` applied (see `excerptPricing` in local/seed-endpoints.ts).
 */
export interface ExcerptEndpoint extends Omit<ProviderEndpoint, 'is_moderated' | 'dataPolicy' | 'regions'> {
  _snapshot_timestamp_utc: string;
  _canonical_slug: string;
  /** Position of this endpoint in the model's full endpoint list (the excerpt is a subset). */
  _endpoint_index: number;
  model_id: string;
  model_name: string;
}

/** The whole of `data/endpoints-excerpt.json`. */
export interface EndpointsExcerptFile {
  _source?: Record<string, string>;
  endpoints: ExcerptEndpoint[];
}

/** A figure's spread across a model's providers, as `data/model-stats.json` gives it. */
export interface MinMaxMedian {
  min: number | null;
  max: number | null;
  median: number | null;
}

/** One value of `data/model-stats.json`, keyed there by canonical slug. */
export interface ModelStats {
  /** Tokens per second across the model's providers. */
  throughput: MinMaxMedian | null;
  /** Time to first token, milliseconds. */
  latency: MinMaxMedian | null;
  e2eLatency: MinMaxMedian | null;
  /** Percent. */
  uptime: number | null;
  topProvider: {
    p50_throughput: number | null;
    p50_latency: number | null;
    request_count: number | null;
  } | null;
}

/** The whole of `data/model-stats.json`. */
export type ModelStatsFile = Record<string, ModelStats>;

/** What the seed derives endpoints from, beside the models themselves. */
export interface SeedSources {
  endpoints: ExcerptEndpoint[];
  /** Keyed by canonical slug. */
  stats: Record<string, ModelStats>;
}
