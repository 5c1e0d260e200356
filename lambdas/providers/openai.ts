import type { HttpTransport, ProviderClient } from './provider-client';

type Json = Record<string, unknown>;

/**
 * The request fields OpenAI's Chat Completions API takes (its API reference): every other field
 * of a chat request, the gateway's routing fields included (`provider`, `models`, `route`,
 * `transforms`, `usage`, `plugins`, `reasoning`), is the gateway's and never sent.
 */
export const OPENAI_FIELDS: ReadonlySet<string> = new Set([
  'messages', 'model', 'audio', 'frequency_penalty', 'logit_bias', 'logprobs', 'max_completion_tokens', 'metadata',
  'modalities', 'n', 'parallel_tool_calls', 'prediction', 'presence_penalty', 'prompt_cache_key', 'reasoning_effort',
  'response_format', 'safety_identifier', 'seed', 'service_tier', 'stop', 'store', 'stream', 'stream_options', 'temperature',
  'tool_choice', 'tools', 'top_logprobs', 'top_p', 'user', 'verbosity', 'web_search_options',
]);

/** The chat parameters OpenAI's API carries, by their public names (`max_tokens` and `reasoning` are renamed on the way). */
export const OPENAI_PARAMETERS: ReadonlySet<string> = new Set([...OPENAI_FIELDS, 'max_tokens', 'reasoning', 'include_reasoning', 'structured_outputs']);

const EFFORTS = new Set(['minimal', 'low', 'medium', 'high']);

/**
 * The body OpenAI is sent (docs/providers.md, "OpenAI"): the provider's model id; `max_tokens`
 * as `max_completion_tokens` (the one cap every OpenAI chat model takes), the larger of the two
 * when both come; the public `reasoning.effort` as `reasoning_effort`; content parts' public
 * `cache_control` left out (OpenAI caches by itself); only {@link OPENAI_FIELDS}.
 */
export function openAiBody(body: Readonly<Json>, modelId: string): Json {
  const sent: Json = {};
  for (const [name, value] of Object.entries(body)) if (OPENAI_FIELDS.has(name)) sent[name] = value;
  sent.model = modelId;
  const caps = [body.max_tokens, body.max_completion_tokens].filter((value): value is number => typeof value === 'number');
  if (caps.length > 0) sent.max_completion_tokens = Math.max(...caps);
  const effort = (body.reasoning as Json | undefined)?.effort;
  if (sent.reasoning_effort === undefined && typeof effort === 'string' && EFFORTS.has(effort)) sent.reasoning_effort = effort;
  if (Array.isArray(body.messages)) sent.messages = body.messages.map(withoutCacheControl);
  return sent;
}

function withoutCacheControl(message: unknown): unknown {
  const content = (message as Json | null)?.content;
  if (!Array.isArray(content)) return message;
  return { ...(message as Json), content: content.map((part) => {
    if (typeof part !== 'object' || part === null || !('cache_control' in part)) return part;
    const { cache_control: _cache, ...rest } = part as Json;
    return rest;
  }) };
}

/**
 * A client of OpenAI's Chat Completions API at `baseUrl` (`<baseUrl>/chat/completions`), the key
 * as a bearer token. OpenAI's answers are the public shape already: they pass as sent.
 */
export function openAiClient(baseUrl: string, transport: HttpTransport): ProviderClient {
  return ({ modelId, body, credential, signal }) => {
    const headers: Record<string, string> = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
    if (credential) headers.Authorization = `Bearer ${credential}`;
    return transport(`${baseUrl}/chat/completions`, { method: 'POST', headers, body: JSON.stringify(openAiBody(body, modelId)), signal });
  };
}
