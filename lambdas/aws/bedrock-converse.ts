import {
  BedrockRuntimeClient,
  BedrockRuntimeServiceException,
  ConverseCommand,
  ConverseStreamCommand,
  InvokeModelCommand,
  InvokeModelWithResponseStreamCommand,
  type BedrockRuntimeClientConfig,
  type ContentBlock,
  type ConverseCommandInput,
  type ConverseStreamOutput,
  type Message,
  type ResponseStream,
  type SystemContentBlock,
  type Tool,
} from '@aws-sdk/client-bedrock-runtime';
import { invalidParameter } from '../errors';
import { chatCallOf, completionTokens, thinkingBudget, type ChatCall } from '../providers/chat-call';
import { chatResponse, finishOfStop, type AnswerEvent, type TokenUsage } from '../providers/chat-answer';
import type { Part } from '../providers/conversation';
import { failureResponse, type ProviderClient } from '../providers/provider-client';
import { anthropicBody, anthropicEventsOf, anthropicMessageEvents } from '../providers/anthropic';
import { MESSAGES_REQUEST_MEMBER, nativeMessagesBody } from '../providers/anthropic-native';

type Json = Record<string, unknown>;

const IMAGE_FORMATS: Readonly<Record<string, 'png' | 'jpeg' | 'gif' | 'webp'>> = { 'image/png': 'png', 'image/jpeg': 'jpeg', 'image/gif': 'gif', 'image/webp': 'webp' };
const CACHE_POINT = { cachePoint: { type: 'default' as const } };

/**
 * The Converse request of a call (docs/providers.md, "Amazon Bedrock"): `system` blocks, turns
 * of content blocks (images as bytes: Converse takes no image address), `cachePoint` after a
 * part the client marked with `cache_control`, `toolConfig` (a JSON answer as a forced tool),
 * `inferenceConfig`, and for Anthropic's models `top_k` and `thinking` in
 * `additionalModelRequestFields`.
 */
export function converseInput(call: ChatCall, modelId: string, maxCompletionTokens: number): { input: ConverseCommandInput; answerTool: string | undefined } {
  const messages: Message[] = call.conversation.turns.map((turn) => ({ role: turn.role, content: turn.parts.flatMap(contentBlocks) }));
  const system: SystemContentBlock[] = call.conversation.system.flatMap((part) => (part.cache ? [{ text: part.text }, CACHE_POINT] : [{ text: part.text }]));
  const anthropicModel = /anthropic\.|claude/i.test(modelId);
  const additional: Json = {};
  const input: ConverseCommandInput = { modelId, messages };
  if (system.length > 0) input.system = system;
  const maxTokens = completionTokens(call, maxCompletionTokens);
  const inference: NonNullable<ConverseCommandInput['inferenceConfig']> = { maxTokens };
  const tools: Tool[] = call.tools.flatMap((tool) => {
    const spec: Tool = { toolSpec: { name: tool.name, ...(tool.description ? { description: tool.description } : {}), inputSchema: { json: tool.parameters as never } } };
    return tool.cache ? [spec, CACHE_POINT] : [spec];
  });
  let toolChoice: NonNullable<ConverseCommandInput['toolConfig']>['toolChoice'];
  if (call.toolChoice === 'required') toolChoice = { any: {} };
  else if (typeof call.toolChoice === 'object') toolChoice = { tool: { name: call.toolChoice.name } };
  if (call.json) {
    tools.push({ toolSpec: { name: call.json.name, description: 'Answer with JSON of this schema.', inputSchema: { json: call.json.schema as never } } });
    toolChoice = { tool: { name: call.json.name } };
  }
  const toolsInHistory = call.conversation.turns.some((turn) => turn.parts.some((part) => part.type === 'tool_call' || part.type === 'tool_result'));
  // Converse has no "none": the tools are left out, unless the history's tool blocks need them declared.
  if (tools.length > 0 && (call.toolChoice !== 'none' || toolsInHistory || call.json)) input.toolConfig = { tools, ...(toolChoice ? { toolChoice } : {}) };
  const forced = toolChoice !== undefined;
  const thinking = anthropicModel && !forced ? thinkingBudget(call, maxCompletionTokens) : undefined;
  if (thinking !== undefined && thinking < maxTokens) {
    additional.thinking = { type: 'enabled', budget_tokens: thinking };
  } else {
    if (call.temperature !== undefined) inference.temperature = Math.min(1, Math.max(0, call.temperature));
    if (call.topP !== undefined) inference.topP = call.topP;
    if (call.topK !== undefined && anthropicModel) additional.top_k = call.topK;
  }
  if (call.stop.length > 0) inference.stopSequences = call.stop.slice(0, 4);
  input.inferenceConfig = inference;
  if (Object.keys(additional).length > 0) input.additionalModelRequestFields = additional as never;
  return { input, answerTool: call.json?.name };
}

function contentBlocks(part: Part): ContentBlock[] {
  switch (part.type) {
    case 'text':
      if (part.text.trim() === '') return [];
      return part.cache ? [{ text: part.text }, CACHE_POINT] : [{ text: part.text }];
    case 'image': {
      if (part.source.kind !== 'data') throw invalidParameter('messages', 'Amazon Bedrock takes images as data URLs only, not by address');
      const image: ContentBlock = { image: { format: IMAGE_FORMATS[part.source.mediaType]!, source: { bytes: Buffer.from(part.source.data, 'base64') } } };
      return part.cache ? [image, CACHE_POINT] : [image];
    }
    case 'tool_call':
      return [{ toolUse: { toolUseId: part.id, name: part.name, input: part.input as never } }];
    case 'tool_result': {
      const content = part.content.flatMap(contentBlocks).filter((block) => 'text' in block || 'image' in block) as never[];
      const result: ContentBlock = { toolResult: { toolUseId: part.id, content: content.length > 0 ? content : [{ text: '(empty)' }] } };
      return part.cache ? [result, CACHE_POINT] : [result];
    }
    case 'reasoning':
      return part.signature ? [{ reasoningContent: { reasoningText: { text: part.text, signature: part.signature } } }] : [];
    case 'redacted_reasoning':
      return [{ reasoningContent: { redactedContent: Buffer.from(part.data, 'base64') } }];
  }
}

function usageOf(raw: { inputTokens?: number; outputTokens?: number; cacheReadInputTokens?: number; cacheWriteInputTokens?: number } | undefined): Partial<TokenUsage> {
  const out: Partial<TokenUsage> = {};
  if (raw?.inputTokens !== undefined) out.input = raw.inputTokens;
  if (raw?.outputTokens !== undefined) out.output = raw.outputTokens;
  if (raw?.cacheReadInputTokens !== undefined) out.cacheRead = raw.cacheReadInputTokens;
  if (raw?.cacheWriteInputTokens !== undefined) out.cacheWrite = raw.cacheWriteInputTokens;
  return out;
}

/** The events of a whole Converse answer. */
export function converseEvents(output: { output?: { message?: Message }; stopReason?: string; usage?: Parameters<typeof usageOf>[0] }): AnswerEvent[] {
  const events: AnswerEvent[] = [];
  (output.output?.message?.content ?? []).forEach((block, index) => {
    if (block.text !== undefined) events.push({ type: 'text', text: block.text });
    else if (block.reasoningContent?.reasoningText) {
      const { text, signature } = block.reasoningContent.reasoningText;
      events.push({ type: 'reasoning', text: text ?? '', ...(signature ? { signature } : {}) });
    } else if (block.reasoningContent?.redactedContent) {
      events.push({ type: 'redacted_reasoning', data: Buffer.from(block.reasoningContent.redactedContent).toString('base64') });
    } else if (block.toolUse) {
      events.push({ type: 'tool_start', block: index, id: String(block.toolUse.toolUseId), name: String(block.toolUse.name) });
      events.push({ type: 'tool_input', block: index, json: JSON.stringify(block.toolUse.input ?? {}) });
    }
  });
  events.push({ type: 'usage', usage: usageOf(output.usage) }, { type: 'finish', reason: finishOfStop(output.stopReason) });
  return events;
}

/** The events of a ConverseStream answer; an exception frame ends it with an error event. */
export async function* converseStreamEvents(stream: AsyncIterable<ConverseStreamOutput>): AsyncGenerator<AnswerEvent> {
  try {
    for await (const event of stream) {
      if (event.contentBlockStart?.start?.toolUse) {
        const { toolUseId, name } = event.contentBlockStart.start.toolUse;
        yield { type: 'tool_start', block: event.contentBlockStart.contentBlockIndex ?? 0, id: String(toolUseId), name: String(name) };
      } else if (event.contentBlockDelta?.delta) {
        const { delta, contentBlockIndex } = event.contentBlockDelta;
        if (delta.text !== undefined) yield { type: 'text', text: delta.text };
        else if (delta.toolUse) yield { type: 'tool_input', block: contentBlockIndex ?? 0, json: delta.toolUse.input ?? '' };
        else if (delta.reasoningContent?.text !== undefined) yield { type: 'reasoning', text: delta.reasoningContent.text };
        else if (delta.reasoningContent?.signature !== undefined) yield { type: 'reasoning', signature: delta.reasoningContent.signature };
        else if (delta.reasoningContent?.redactedContent !== undefined) yield { type: 'redacted_reasoning', data: Buffer.from(delta.reasoningContent.redactedContent).toString('base64') };
      } else if (event.messageStop) {
        yield { type: 'finish', reason: finishOfStop(event.messageStop.stopReason) };
      } else if (event.metadata) {
        yield { type: 'usage', usage: usageOf(event.metadata.usage) };
      } else {
        const exception = Object.entries(event).find(([name]) => name.endsWith('Exception'));
        if (exception) {
          yield { type: 'error', message: `Provider failed mid-answer (${exception[0]}): ${String((exception[1] as Json | undefined)?.message ?? '').slice(0, 300)}` };
          return;
        }
      }
    }
  } catch (error) {
    if (!(error instanceof BedrockRuntimeServiceException)) throw error;
    yield { type: 'error', message: `Provider failed mid-answer (${error.name}): ${error.message.slice(0, 300)}` };
  }
}

/**
 * A client of Bedrock's Converse API, signed with the function's own AWS credentials (its role;
 * locally the SDK's default chain), at `endpoint` in `region`. A service error becomes its
 * status with the error's name and message; `config` adds client settings (a request handler).
 */
export function bedrockClient(endpoint: string, region: string, config: Partial<BedrockRuntimeClientConfig> = {}): ProviderClient {
  const client = new BedrockRuntimeClient({ region, endpoint, maxAttempts: 1, ...config });
  return async ({ modelId, body, maxCompletionTokens, signal }) => {
    const call = chatCallOf(body);
    const native = body[MESSAGES_REQUEST_MEMBER];
    try {
      // A Messages request to one of Anthropic's models goes in Anthropic's own API (InvokeModel).
      if (typeof native === 'object' && native !== null && ANTHROPIC_MODEL.test(modelId)) return await invokeMessages(client, { call, native: native as Json, modelId, maxCompletionTokens, signal });
      const { input, answerTool } = converseInput(call, modelId, maxCompletionTokens);
      if (!call.stream) {
        const output = await client.send(new ConverseCommand(input), { abortSignal: signal });
        return chatResponse((async function* () { yield* converseEvents(output); })(), false, { answerTool });
      }
      const output = await client.send(new ConverseStreamCommand(input), { abortSignal: signal });
      if (!output.stream) return failureResponse(502, 'Bedrock answered without a stream');
      return chatResponse(converseStreamEvents(output.stream), true, { answerTool });
    } catch (error) {
      if (!(error instanceof BedrockRuntimeServiceException)) throw error;
      const status = error.$metadata.httpStatusCode ?? 500;
      return failureResponse(status, `${error.name}: ${error.message}`.slice(0, 300));
    }
  };
}

/** An Anthropic model's id on Bedrock: `anthropic.…`, or an inference profile of one (`us.anthropic.…`, its ARN). */
const ANTHROPIC_MODEL = /(^|[./])anthropic\./;
/** The Messages API version Bedrock's InvokeModel takes for Anthropic's models. */
const BEDROCK_ANTHROPIC_VERSION = 'bedrock-2023-05-31';

/**
 * A Messages request sent to one of Anthropic's models through InvokeModel (docs/providers.md,
 * "Amazon Bedrock"): the body as its client wrote it (anthropic-native.ts) with Bedrock's
 * `anthropic_version` and neither `model` nor `stream`; the answer Anthropic's message, or its
 * events each in a `chunk`. A service error ends a stream as Anthropic's `error` event would.
 */
async function invokeMessages(
  client: BedrockRuntimeClient,
  { call, native, modelId, maxCompletionTokens, signal }: { call: ChatCall; native: Json; modelId: string; maxCompletionTokens: number; signal: AbortSignal },
): Promise<Response> {
  const translated = anthropicBody(call, modelId, maxCompletionTokens);
  const { model: _model, stream: _stream, ...sent } = nativeMessagesBody(native, translated.body);
  const input = { modelId, contentType: 'application/json', accept: 'application/json', body: JSON.stringify({ anthropic_version: BEDROCK_ANTHROPIC_VERSION, ...sent }) };
  const options = { answerTool: translated.answerTool };
  if (!call.stream) {
    const output = await client.send(new InvokeModelCommand(input), { abortSignal: signal });
    const message = JSON.parse(new TextDecoder().decode(output.body)) as Json;
    return chatResponse((async function* () { yield* anthropicMessageEvents(message); })(), false, options);
  }
  const output = await client.send(new InvokeModelWithResponseStreamCommand(input), { abortSignal: signal });
  if (!output.body) return failureResponse(502, 'Bedrock answered without a stream');
  return chatResponse(anthropicEventsOf(chunkEvents(output.body)), true, options);
}

/** Anthropic's events out of InvokeModel's stream; an exception frame or a failure is an `error` event. */
async function* chunkEvents(stream: AsyncIterable<ResponseStream>): AsyncGenerator<Json> {
  try {
    for await (const part of stream) {
      if (part.chunk?.bytes) {
        yield JSON.parse(new TextDecoder().decode(part.chunk.bytes)) as Json;
        continue;
      }
      const exception = Object.entries(part).find(([name, value]) => name.endsWith('Exception') && value !== undefined);
      if (exception) {
        yield { type: 'error', error: { type: exception[0], message: String((exception[1] as Json | undefined)?.message ?? '') } };
        return;
      }
    }
  } catch (error) {
    if (!(error instanceof BedrockRuntimeServiceException)) throw error;
    yield { type: 'error', error: { type: error.name, message: error.message } };
  }
}
