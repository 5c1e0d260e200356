import { UpstreamError } from '../errors';
import type { StreamingResponse } from '../http/streaming';
import type { UsageRecord } from '../usage/usage';
import { sseEvents } from '../providers/sse';
import { noteChunk, type Observed } from './generation-facts';
import { publicChunk, publicCompletion, publicUsage, type AnswerFacts } from './public-answer';
import type { CompletionUsage } from './relayed-usage';
import type { OpenedUpstream } from './upstream';
import type { AnswerShape } from './answer-shapes';
import { countOf } from '../counts';

const MAX_UPSTREAM_JSON_BYTES = 16 * 1024 * 1024;

/**
 * What a relay leaves for after the usage write: the usage the provider reported (undefined when
 * none came, a whole answer without usage included: the completion is charged its maximum), the bytes that complete the answer with
 * what it was charged, and the provider's failure after it began to answer, reported once charged.
 */
export interface Relayed {
  usage: CompletionUsage | undefined;
  acknowledge(charged: UsageRecord, keep?: Keep): Promise<void>;
  failure?: unknown;
}

/** What keeps a whole answer before it is written (a kept response); false when it was not kept, and the answer says so. */
export type Keep = (answer: Record<string, unknown>) => Promise<boolean>;

const NOTHING_MORE = async (): Promise<void> => undefined;

/** Reads the provider's answer; the body goes out in `acknowledge`, once its usage is recorded. */
export async function relayJson(upstream: OpenedUpstream, response: StreamingResponse, facts: AnswerFacts, observed: Observed, shape: AnswerShape): Promise<Relayed> {
  const name = upstream.endpoint.provider_name;
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(await upstream.reader.text(MAX_UPSTREAM_JSON_BYTES));
  } catch (error) {
    upstream.abort();
    return { usage: undefined, acknowledge: NOTHING_MORE, failure: error instanceof UpstreamError ? error : new UpstreamError('upstream_failed', `Provider ${name} sent an answer that is not JSON`) };
  }
  if (typeof body !== 'object' || body === null || !Array.isArray(body.choices)) {
    return { usage: undefined, acknowledge: NOTHING_MORE, failure: new UpstreamError('upstream_failed', `Provider ${name} sent an answer without choices`) };
  }
  noteChunk(observed, body);
  return {
    usage: usageOf(body.usage),
    acknowledge: async (charged, keep) => {
      let answer = shape.completion(publicCompletion({ ...body, usage: publicUsage(body.usage, charged) }, facts));
      if (keep && !(await keep(answer))) answer = { ...answer, store: false };
      response.json(200, answer, { 'X-Generation-Id': facts.id });
    },
  };
}

/**
 * Relays the provider's events as they arrive. The usage chunk is always requested upstream
 * (docs/reference.md#keys-and-credentials: usage is accounted from it) and always sent, as the public API does whatever
 * `stream_options.include_usage` says: the provider's usage is held back, and the last chunk
 * (no choices, the usage with its cost) and the final `data: [DONE]` go out in `acknowledge`,
 * once the usage is recorded.
 *
 * The provider is read no faster than the client takes the answer (backpressure). A client that
 * leaves stops receiving, and the rest of the provider's answer is read without being sent, for
 * the usage it reports: the provider bills the whole completion, and so is the key.
 */
export async function relayStream(upstream: OpenedUpstream, response: StreamingResponse, facts: AnswerFacts, observed: Observed, keepaliveMs: number, shape: AnswerShape): Promise<Relayed> {
  const name = upstream.endpoint.provider_name;
  const type = upstream.response.headers.get('content-type') ?? '';
  if (!type.startsWith('text/event-stream')) {
    upstream.abort();
    return { usage: undefined, acknowledge: NOTHING_MORE, failure: new UpstreamError('upstream_failed', `Provider ${name} did not answer with an event stream`) };
  }
  response.start(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache', Connection: 'keep-alive', 'X-Generation-Id': facts.id });
  const stopKeepalive = keepAlive(response, keepaliveMs);
  try {
    return await relayEvents(upstream, response, facts, observed, shape);
  } finally {
    stopKeepalive();
  }
}

/** How long a stream may go without a byte before the gateway sends an SSE comment (proxies and clients drop idle streams). */
export const KEEPALIVE_MS = 15_000;

/**
 * Sends an SSE comment whenever the stream has been silent for most of `everyMs`: a provider
 * thinking for minutes, or one whose own keepalives the gateway does not pass on, leaves no gap
 * of `everyMs`. Returns what stops it.
 */
function keepAlive(response: StreamingResponse, everyMs: number): () => void {
  const tick = everyMs / 3;
  let written = response.writes;
  let silentFor = 0;
  const timer = setInterval(() => {
    silentFor = response.writes === written ? silentFor + tick : 0;
    written = response.writes;
    if (silentFor >= everyMs - tick && !response.closed) {
      response.write(': keep-alive\n\n');
      written = response.writes;
      silentFor = 0;
    }
  }, tick);
  timer.unref();
  return () => clearInterval(timer);
}

/** The events of an open stream, relayed (see {@link relayStream}). */
async function relayEvents(upstream: OpenedUpstream, response: StreamingResponse, facts: AnswerFacts, observed: Observed, shape: AnswerShape): Promise<Relayed> {
  const name = upstream.endpoint.provider_name;
  let usage: CompletionUsage | undefined;
  /** The provider's last usage object, whose own members (token details) the usage chunk keeps. */
  let reportedUsage: unknown;
  const failed = (failure: unknown): Relayed => {
    upstream.abort();
    return { usage, acknowledge: NOTHING_MORE, failure };
  };
  try {
    for await (const event of sseEvents(upstream.reader)) {
      if (event.data === null) {
        // Comments keep idle connections open; pass them on.
        if (!response.closed) await response.send(`${event.raw}\n\n`);
        continue;
      }
      if (event.data.trim() === '[DONE]') {
        return {
          usage,
          acknowledge: async (charged, keep) => {
            const end = shape.end(publicChunk({ choices: [], usage: publicUsage(reportedUsage, charged) }, facts));
            const answer = shape.final?.();
            response.write(keep && answer && !(await keep(answer)) ? shape.unkept!() : end);
          },
        };
      }
      let chunk: { choices?: unknown; usage?: unknown; error?: unknown };
      try {
        chunk = JSON.parse(event.data);
      } catch {
        return failed(new UpstreamError('upstream_failed', `Provider ${name} sent an event that is not JSON`));
      }
      if (typeof chunk !== 'object' || chunk === null || Array.isArray(chunk)) {
        return failed(new UpstreamError('upstream_failed', `Provider ${name} sent an event that is not a JSON object`));
      }
      noteChunk(observed, chunk);
      if (chunk.error) {
        // The provider reports its own failure mid-stream: pass it on and stop; it is charged, and nothing more is sent.
        response.write(shape.streamError(publicChunk(chunk, facts)));
        upstream.abort();
        return { usage, acknowledge: NOTHING_MORE };
      }
      const reported = usageOf(chunk.usage);
      if (reported) {
        usage = reported;
        reportedUsage = chunk.usage;
        if (Array.isArray(chunk.choices) && chunk.choices.length === 0) continue;
        const { usage: _usage, ...rest } = chunk;
        chunk = rest;
      }
      if (!response.closed) {
        const written = shape.chunk(publicChunk(chunk, facts));
        if (written !== '') await response.send(written);
      }
    }
  } catch (error) {
    return failed(error);
  }
  return failed(new UpstreamError('upstream_failed', `Provider ${name} ended the stream early`));
}

function usageOf(value: unknown): CompletionUsage | undefined {
  const usage = value as { prompt_tokens?: unknown; completion_tokens?: unknown; prompt_tokens_details?: { cached_tokens?: unknown; cache_write_tokens?: unknown } | null } | null | undefined;
  if (!usage || typeof usage !== 'object') return undefined;
  const count = (n: unknown) => countOf(n) ?? 0;
  const promptTokens = count(usage.prompt_tokens);
  // Parts of the prompt: never more than it, whatever a provider reports.
  const cachedTokens = Math.min(promptTokens, count(usage.prompt_tokens_details?.cached_tokens));
  const cacheWriteTokens = Math.min(promptTokens - cachedTokens, count(usage.prompt_tokens_details?.cache_write_tokens));
  return { promptTokens, completionTokens: count(usage.completion_tokens), cachedTokens, cacheWriteTokens };
}
