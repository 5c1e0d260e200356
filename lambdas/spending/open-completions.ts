import type { GenerationRecord } from '../usage/generations';
import type { KeptUsage } from '../usage/usage';
import { RUNNING_REQUEST_SECONDS } from './ledgers';

/**
 * A completion between its start (a limited one's write-ahead of its estimate) and its end
 * (docs/limits.md, "Leaving early and failures"), with what it is recorded as should its function
 * die before it ends: its estimate, the most it could cost, which a limited one's limits then keep
 * charged, as usage marked `maximum` on the endpoint whose bound the estimate is, and a generation
 * that says so ({@link diedGeneration}).
 */
export interface OpenCompletion {
  usage: KeptUsage;
  /** What its generation keeps of the request: its ids, when it began, whether it streamed, and what it said of its client (`clientText`). */
  request: {
    generationId: string;
    requestId: string;
    createdAt: string;
    streamed: boolean;
    origin: string;
    httpReferer: string | null;
    userAgent: string | null;
    externalUser: string | null;
  };
}

/** The generation of a completion that never ended: charged the most it could cost, with no answer and no time. */
export function diedGeneration({ usage, request }: OpenCompletion): GenerationRecord {
  const { generationId, ...asked } = request;
  return {
    id: generationId,
    ...asked,
    organizationId: usage.organizationId,
    keyHash: usage.keyHash,
    workspaceId: usage.workspaceId,
    via: usage.via,
    model: usage.model.id,
    providerName: usage.endpoint.provider_name,
    upstreamId: null,
    cancelled: false,
    finishReason: null,
    promptTokens: usage.promptTokens,
    completionTokens: usage.completionTokens,
    reasoningTokens: null,
    cachedTokens: null,
    cost: usage.cost,
    chargeBasis: 'maximum_cost',
    latencyMs: 0,
    generationTimeMs: null,
    serviceTier: null,
  };
}

/** Where open completions are kept (lambdas/aws/dynamo-open-completions.ts). */
export interface OpenCompletions {
  /** Keeps the completion open; resolves once durable (a limited request's before a provider is asked). */
  open(completion: OpenCompletion): Promise<void>;
  /** Its usage was recorded, or no provider was asked: nothing is left to record for it. */
  close(completion: OpenCompletion): Promise<void>;
}

/** Open completions are kept by the hour they began in: the rollup reads the hours that may hold one left open. */
export const OPEN_BUCKET_SECONDS = 3600;

/** How many past hours the rollup reads: a completion left open longer is recorded by none (its item expires). */
export const OPEN_HOURS_READ = 48;

/** The hour an instant falls in. */
export const openBucketOf = (at: Date): number => Math.floor(at.getTime() / 1000 / OPEN_BUCKET_SECONDS);

/**
 * When every completion of an hour has ended or died: the hour's end, then the longest a request
 * may run. A UTC day's last hour is past this before the day may be folded (`FOLD_GRACE_MS`), so
 * a rollup that records before it folds never writes into a day folded already.
 */
export function openBucketEnds(bucket: number): number {
  return ((bucket + 1) * OPEN_BUCKET_SECONDS + RUNNING_REQUEST_SECONDS) * 1000;
}

