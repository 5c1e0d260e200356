import type { Principal } from '../accounts/types';
import { GENERATION_TEXT_MAX, clientText, type GenerationRecord } from '../usage/generations';
import type { KeptUsage } from '../usage/usage';
import type { AnswerFacts } from './public-answer';
import { countOf } from '../counts';

/** What a relay saw of the provider's answer that its stats report. */
export interface Observed {
  /** The provider's own id of its answer (its first chunk's). */
  upstreamId: string | null;
  /** The last finish reason a choice gave. */
  finishReason: string | null;
  serviceTier: string | null;
  /** The provider's last usage object: its token details. */
  usage: Record<string, unknown> | undefined;
}

const text = (value: unknown, max = GENERATION_TEXT_MAX): string | null => (typeof value === 'string' && value !== '' ? value.slice(0, max) : null);
const object = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
const count = (value: unknown): number | null => countOf(value) ?? null;

/** Notes what one answer or chunk of the provider says of the generation. */
export function noteChunk(observed: Observed, chunk: Record<string, unknown>): void {
  observed.upstreamId ??= text(chunk.id);
  observed.serviceTier = text(chunk.service_tier, 64) ?? observed.serviceTier;
  if (Array.isArray(chunk.choices)) {
    for (const choice of chunk.choices) observed.finishReason = text(object(choice)?.finish_reason, 64) ?? observed.finishReason;
  }
  observed.usage = object(chunk.usage) ?? observed.usage;
}

/** A completion's stats as `GET /generation` reports them. */
export function generationRecord(input: {
  record: KeptUsage;
  principal: Principal;
  /** The request's `Origin`, `Referer` and `User-Agent` headers. */
  headers: { origin?: string; referer?: string; userAgent?: string };
  body: Readonly<Record<string, unknown>>;
  requestId: string;
  facts: AnswerFacts;
  observed: Observed;
  /** Arrival, the provider's answer, and its end. */
  times: { at: Date; answering: Date; ended: Date };
  streamed: boolean;
  cancelled: boolean;
}): GenerationRecord {
  const { record, principal, headers, observed, times } = input;
  return {
    id: input.facts.id,
    requestId: input.requestId,
    organizationId: record.organizationId,
    keyHash: record.keyHash,
    workspaceId: principal.key.workspaceId,
    via: record.via,
    model: input.facts.model,
    providerName: input.facts.provider,
    upstreamId: observed.upstreamId,
    createdAt: times.at.toISOString(),
    streamed: input.streamed,
    cancelled: input.cancelled,
    finishReason: observed.finishReason,
    promptTokens: record.promptTokens,
    completionTokens: record.completionTokens,
    reasoningTokens: count(object(observed.usage?.completion_tokens_details)?.reasoning_tokens),
    cachedTokens: count(object(observed.usage?.prompt_tokens_details)?.cached_tokens),
    cost: record.cost,
    chargeBasis: record.charge === 'maximum' ? 'maximum_cost' : 'provider_usage',
    latencyMs: Math.max(0, times.ended.getTime() - times.at.getTime()),
    generationTimeMs: Math.max(0, times.ended.getTime() - times.answering.getTime()),
    serviceTier: observed.serviceTier,
    origin: clientText(headers.origin) ?? '',
    httpReferer: clientText(headers.referer),
    userAgent: clientText(headers.userAgent),
    externalUser: clientText(input.body.user),
  };
}
