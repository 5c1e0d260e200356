import { chatCallOf, completionTokens, thinkingBudget, type ChatCall } from './chat-call';
import { chatResponse, finishOfStop, type AnswerEvent, type TokenUsage } from './chat-answer';
import type { Part } from './conversation';
import type { HttpTransport, ProviderClient } from './provider-client';
import { bodySource, sseEvents } from './sse';
import { MESSAGES_REQUEST_MEMBER, nativeMessagesBody } from './anthropic-native';

type Json = Record<string, unknown>;

/** The Messages API version every request names. */
export const ANTHROPIC_VERSION = '2023-06-01';

/** The chat parameters the Messages API carries; others are dropped (or the endpoint skipped under `require_parameters`). */
export const ANTHROPIC_PARAMETERS: ReadonlySet<string> = new Set([
  'max_tokens', 'max_completion_tokens', 'temperature', 'top_p', 'top_k', 'stop', 'tools', 'tool_choice',
  'parallel_tool_calls', 'response_format', 'structured_outputs', 'reasoning', 'include_reasoning', 'reasoning_effort', 'user',
]);

/**
 * The Messages API body of a call (docs/providers.md, "Anthropic"): `system` blocks, user and
 * assistant turns of content blocks, tools with `input_schema`, `tool_choice`, sampling within
 * what thinking allows, `thinking` from `reasoning`, a JSON answer as a forced tool, and
 * `max_tokens` always (the endpoint's limit when the client sends none).
 */
export function anthropicBody(call: ChatCall, modelId: string, maxCompletionTokens: number): { body: Json; answerTool: string | undefined } {
  const body: Json = { model: modelId, messages: call.conversation.turns.map((turn) => ({ role: turn.role, content: turn.parts.flatMap(block) })) };
  if (call.conversation.system.length > 0) body.system = call.conversation.system.map((part) => withCache({ type: 'text', text: part.text }, part.cache));
  const tools: Json[] = call.tools.map((tool) => withCache({ name: tool.name, ...(tool.description ? { description: tool.description } : {}), input_schema: objectSchema(tool.parameters) }, tool.cache));
  let toolChoice: Json | undefined = toolChoiceOf(call);
  const answerTool = call.json?.name;
  if (call.json) {
    tools.push({ name: call.json.name, description: 'Answer with JSON of this schema.', input_schema: objectSchema(call.json.schema) });
    toolChoice = { type: 'tool', name: call.json.name };
  }
  if (tools.length > 0) body.tools = tools;
  if (toolChoice && tools.length > 0) body.tool_choice = toolChoice;
  const forced = toolChoice?.type === 'any' || toolChoice?.type === 'tool';
  const budget = forced ? undefined : thinkingBudget(call, maxCompletionTokens);
  body.max_tokens = completionTokens(call, maxCompletionTokens);
  if (budget !== undefined && budget < (body.max_tokens as number)) {
    body.thinking = { type: 'enabled', budget_tokens: budget };
  } else {
    // Thinking allows no sampling changes but top_p of 0.95 and above; left out with it.
    if (call.temperature !== undefined) body.temperature = Math.min(1, Math.max(0, call.temperature));
    if (call.topK !== undefined) body.top_k = call.topK;
    if (call.topP !== undefined) body.top_p = call.topP;
  }
  if (call.stop.length > 0) body.stop_sequences = call.stop.filter((stop) => stop.trim() !== '');
  if (call.user) body.metadata = { user_id: call.user.slice(0, 256) };
  if (call.stream) body.stream = true;
  return { body, answerTool };
}

function toolChoiceOf(call: ChatCall): Json | undefined {
  const choice = call.toolChoice;
  const parallel = call.parallelToolCalls === false ? { disable_parallel_tool_use: true } : {};
  if (choice === undefined) return call.parallelToolCalls === false ? { type: 'auto', ...parallel } : undefined;
  if (choice === 'none') return { type: 'none' };
  if (choice === 'auto') return { type: 'auto', ...parallel };
  if (choice === 'required') return { type: 'any', ...parallel };
  return { type: 'tool', name: choice.name, ...parallel };
}

function objectSchema(schema: Json): Json {
  return schema.type === 'object' ? schema : { properties: {}, ...schema, type: 'object' };
}

function withCache(item: Json, cache: boolean): Json {
  return cache ? { ...item, cache_control: { type: 'ephemeral' } } : item;
}

function block(part: Part): Json[] {
  switch (part.type) {
    case 'text':
      return part.text === '' ? [] : [withCache({ type: 'text', text: part.text }, part.cache)];
    case 'image':
      return [withCache({ type: 'image', source: part.source.kind === 'data' ? { type: 'base64', media_type: part.source.mediaType, data: part.source.data } : { type: 'url', url: part.source.url } }, part.cache)];
    case 'tool_call':
      return [{ type: 'tool_use', id: part.id, name: part.name, input: part.input }];
    case 'tool_result': {
      const content = part.content.flatMap(block);
      return [withCache({ type: 'tool_result', tool_use_id: part.id, ...(content.length > 0 ? { content } : {}) }, part.cache)];
    }
    case 'reasoning':
      // Anthropic takes back only signed thinking; unsigned reasoning from elsewhere is left out.
      return part.signature ? [{ type: 'thinking', thinking: part.text, signature: part.signature }] : [];
    case 'redacted_reasoning':
      return [{ type: 'redacted_thinking', data: part.data }];
  }
}

function usageOf(raw: unknown): Partial<TokenUsage> {
  const usage = (raw ?? {}) as Json;
  const out: Partial<TokenUsage> = {};
  if (typeof usage.input_tokens === 'number') out.input = usage.input_tokens;
  if (typeof usage.output_tokens === 'number') out.output = usage.output_tokens;
  if (typeof usage.cache_read_input_tokens === 'number') out.cacheRead = usage.cache_read_input_tokens;
  if (typeof usage.cache_creation_input_tokens === 'number') out.cacheWrite = usage.cache_creation_input_tokens;
  return out;
}

/** The events of a whole Messages API answer. */
export function anthropicMessageEvents(message: Json): AnswerEvent[] {
  const events: AnswerEvent[] = [];
  const content = Array.isArray(message.content) ? (message.content as Json[]) : [];
  content.forEach((item, index) => {
    if (item.type === 'text' && typeof item.text === 'string') events.push({ type: 'text', text: item.text });
    else if (item.type === 'thinking') events.push({ type: 'reasoning', text: String(item.thinking ?? ''), ...(typeof item.signature === 'string' ? { signature: item.signature } : {}) });
    else if (item.type === 'redacted_thinking' && typeof item.data === 'string') events.push({ type: 'redacted_reasoning', data: item.data });
    else if (item.type === 'tool_use') {
      events.push({ type: 'tool_start', block: index, id: String(item.id), name: String(item.name) });
      events.push({ type: 'tool_input', block: index, json: JSON.stringify(item.input ?? {}) });
    }
  });
  events.push({ type: 'usage', usage: usageOf(message.usage) }, { type: 'finish', reason: finishOfStop(message.stop_reason) });
  return events;
}

/** The events of a Messages API stream, as its server-sent events arrive. */
export function anthropicStreamEvents(response: Response): AsyncGenerator<AnswerEvent> {
  return anthropicEventsOf(
    (async function* () {
      for await (const sse of sseEvents(bodySource(response))) if (sse.data !== null) yield JSON.parse(sse.data) as Json;
    })(),
  );
}

/** The answer events of a Messages stream's events, however they came (server-sent events, or Bedrock's chunks). */
export async function* anthropicEventsOf(stream: AsyncIterable<Json>): AsyncGenerator<AnswerEvent> {
  for await (const data of stream) {
    switch (data.type) {
      case 'message_start':
        yield { type: 'usage', usage: usageOf((data.message as Json | undefined)?.usage) };
        break;
      case 'content_block_start': {
        const item = (data.content_block ?? {}) as Json;
        const index = Number(data.index);
        if (item.type === 'tool_use') yield { type: 'tool_start', block: index, id: String(item.id), name: String(item.name) };
        else if (item.type === 'text' && typeof item.text === 'string' && item.text !== '') yield { type: 'text', text: item.text };
        else if (item.type === 'redacted_thinking' && typeof item.data === 'string') yield { type: 'redacted_reasoning', data: item.data };
        break;
      }
      case 'content_block_delta': {
        const delta = (data.delta ?? {}) as Json;
        const index = Number(data.index);
        if (delta.type === 'text_delta') yield { type: 'text', text: String(delta.text ?? '') };
        else if (delta.type === 'input_json_delta') yield { type: 'tool_input', block: index, json: String(delta.partial_json ?? '') };
        else if (delta.type === 'thinking_delta') yield { type: 'reasoning', text: String(delta.thinking ?? '') };
        else if (delta.type === 'signature_delta') yield { type: 'reasoning', signature: String(delta.signature ?? '') };
        break;
      }
      case 'message_delta':
        yield { type: 'usage', usage: usageOf(data.usage) };
        yield { type: 'finish', reason: finishOfStop((data.delta as Json | undefined)?.stop_reason) };
        break;
      case 'message_stop':
        return;
      case 'ping':
        yield { type: 'keepalive' };
        break;
      case 'error': {
        const error = (data.error ?? {}) as Json;
        yield { type: 'error', message: `Provider failed mid-answer (${String(error.type ?? 'error')}): ${String(error.message ?? '').slice(0, 300)}` };
        return;
      }
    }
  }
  throw new Error('The Messages stream ended before message_stop');
}

/**
 * A client of Anthropic's Messages API at `baseUrl` (`<baseUrl>/messages`), the key in
 * `x-api-key`. A failure status is passed on as the provider sent it (its body's `error.message`
 * and `Retry-After`); 529 (overloaded) is a 5xx the next endpoint may take over.
 */
export function anthropicClient(baseUrl: string, transport: HttpTransport): ProviderClient {
  return async ({ modelId, body, maxCompletionTokens, credential, signal }) => {
    const call = chatCallOf(body);
    const translated = anthropicBody(call, modelId, maxCompletionTokens);
    const { answerTool } = translated;
    // A Messages request goes as its client wrote it, its parameters as translated (anthropic-native.ts).
    const native = body[MESSAGES_REQUEST_MEMBER];
    const sent = typeof native === 'object' && native !== null ? nativeMessagesBody(native as Json, translated.body) : translated.body;
    const headers: Record<string, string> = { 'Content-Type': 'application/json', Accept: call.stream ? 'text/event-stream' : 'application/json', 'anthropic-version': ANTHROPIC_VERSION };
    if (credential) headers['x-api-key'] = credential;
    const response = await transport(`${baseUrl}/messages`, { method: 'POST', headers, body: JSON.stringify(sent), signal });
    if (!response.ok) return response;
    const events = call.stream ? anthropicStreamEvents(response) : (async function* () { yield* anthropicMessageEvents(JSON.parse(await response.text()) as Json); })();
    return chatResponse(events, call.stream, { answerTool });
  };
}
