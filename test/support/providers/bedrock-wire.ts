import { randomBytes } from 'node:crypto';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import type { BedrockReply, StandInUsage } from './bedrock-stand-in';

/**
 * The Converse wire of the Bedrock stand-in: what a request body may hold (refused as the
 * service refuses it, with its messages where they are known), and the answers it gives, as
 * one JSON document (`converse`) or as AWS event-stream frames (`converse-stream`).
 */

type Json = Record<string, unknown>;

/** An error the service answers: `x-amzn-errortype` names `type`, the body is `{"message"}`. */
export class BedrockError extends Error {
  constructor(
    readonly type: string,
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

const fail = (message: string): never => {
  throw new BedrockError('ValidationException', message);
};
/** The service's message for a constraint on one member, e.g. `Member must not be null`. */
const constraint = (path: string, must: string): never => fail(`1 validation error detected: Value at '${path}' failed to satisfy constraint: Member must ${must}`);
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const join = (path: string, key: string | number) => (path ? `${path}.${key}` : String(key));
const NOTHING_TO_CACHE = 'There is nothing available to cache. Please remove the invalid cache point and try again.';
const NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function object(value: unknown, path: string, allowed: readonly string[]): Json {
  if (value === undefined || value === null) return constraint(path, 'not be null');
  if (!isObject(value)) return constraint(path, 'be a structure');
  const unknown = Object.keys(value).find((key) => !allowed.includes(key));
  if (unknown !== undefined) fail(`The field ${join(path, unknown)} is not part of the Converse API. Remove it and try again.`);
  return value;
}

/** A union: exactly one of `members` set. */
function oneOf(value: unknown, path: string, members: readonly string[], what: string): [string, unknown] {
  const union = object(value, path, members);
  const set = Object.keys(union);
  if (set.length !== 1) fail(`The ${what} object at ${path} must set exactly one of ${members.join(', ')}; it sets ${set.length === 0 ? 'none' : set.join(', ')}.`);
  return [set[0]!, union[set[0]!]];
}

function list(value: unknown, path: string, minimum = 0): unknown[] {
  if (value === undefined || value === null) return constraint(path, 'not be null');
  if (!Array.isArray(value)) return constraint(path, 'be a list');
  if (value.length < minimum) constraint(path, `have length greater than or equal to ${minimum}`);
  return value;
}

function string(value: unknown, path: string, pattern?: RegExp): string {
  if (value === undefined || value === null) return constraint(path, 'not be null');
  if (typeof value !== 'string') return constraint(path, 'be a string');
  if (pattern && !pattern.test(value)) constraint(path, `satisfy regular expression pattern: ${pattern.source}`);
  return value;
}

function oneValue(value: unknown, path: string, allowed: readonly string[]): void {
  if (!allowed.includes(string(value, path))) constraint(path, `satisfy enum value set: [${allowed.join(', ')}]`);
}

function number(value: unknown, path: string, minimum: number, maximum: number, integer = false): void {
  if (typeof value !== 'number' || !Number.isFinite(value) || (integer && !Number.isInteger(value))) constraint(path, integer ? 'be an integer' : 'be a number');
  if ((value as number) < minimum) constraint(path, `have value greater than or equal to ${minimum}`);
  if ((value as number) > maximum) constraint(path, `have value less than or equal to ${maximum}`);
}

function nonBlank(value: unknown, path: string, owner: string): void {
  if (string(value, path).trim() === '') fail(`The text field in the ${owner} object at ${path.replace(/\.text$/, '')} is blank. Add text to the text field, and try again.`);
}

function image(value: unknown, path: string): void {
  const block = object(value, path, ['format', 'source']);
  oneValue(block.format, `${path}.format`, ['png', 'jpeg', 'gif', 'webp']);
  const [, bytes] = oneOf(block.source, `${path}.source`, ['bytes'], 'ImageSource');
  if (string(bytes, `${path}.source.bytes`) === '' || !BASE64.test(bytes as string)) constraint(`${path}.source.bytes`, 'be non-empty base64-encoded bytes');
}

function cachePoint(value: unknown, path: string): void {
  const point = object(value, path, ['type', 'ttl']);
  oneValue(point.type, `${path}.type`, ['default']);
  if (point.ttl !== undefined) oneValue(point.ttl, `${path}.ttl`, ['5m', '1h']);
}

function duplicates(ids: readonly string[]): string[] {
  return [...new Set(ids.filter((id, i) => ids.indexOf(id) !== i))];
}

const BLOCKS = ['text', 'image', 'toolUse', 'toolResult', 'reasoningContent', 'cachePoint'];

/** One content block; returns its kind and, for toolUse and toolResult, the id it carries. */
function contentBlock(value: unknown, path: string, role: string): { kind: string; id?: string } {
  const [kind, member] = oneOf(value, path, BLOCKS, 'ContentBlock');
  const at = `${path}.${kind}`;
  if (kind === 'text') nonBlank(member, at, 'ContentBlock');
  if (kind === 'image') image(member, at);
  if (kind === 'cachePoint') cachePoint(member, at);
  if (kind === 'reasoningContent') {
    if (role === 'user') fail('User messages cannot contain reasoning content. Please remove the reasoning content and try again.');
    const [form, reasoning] = oneOf(member, at, ['reasoningText', 'redactedContent'], 'ReasoningContentBlock');
    if (form === 'redactedContent' && !BASE64.test(string(reasoning, `${at}.redactedContent`))) constraint(`${at}.redactedContent`, 'be base64-encoded bytes');
    if (form === 'reasoningText') {
      const text = object(reasoning, `${at}.reasoningText`, ['text', 'signature']);
      string(text.text, `${at}.reasoningText.text`);
      if (text.signature !== undefined) string(text.signature, `${at}.reasoningText.signature`);
    }
  }
  if (kind === 'toolUse') {
    if (role === 'user') fail('User messages cannot contain toolUse content. Please remove the toolUse content and try again.');
    const use = object(member, at, ['toolUseId', 'name', 'input', 'type']);
    const id = string(use.toolUseId, `${at}.toolUseId`, NAME);
    string(use.name, `${at}.name`, NAME);
    if (!isObject(use.input)) constraint(`${at}.input`, 'be a JSON object');
    if (use.type !== undefined) oneValue(use.type, `${at}.type`, ['tool_use', 'server_tool_use']);
    return { kind, id };
  }
  if (kind === 'toolResult') {
    if (role === 'assistant') fail('Assistant messages cannot contain toolResult content. Please remove the toolResult content and try again.');
    const result = object(member, at, ['toolUseId', 'content', 'status', 'type']);
    const id = string(result.toolUseId, `${at}.toolUseId`, NAME);
    if (result.status !== undefined) oneValue(result.status, `${at}.status`, ['success', 'error']);
    const content = list(result.content, `${at}.content`);
    if (content.length === 0 && result.status === 'error') fail(`The content field at ${at} cannot be empty when status value is error.`);
    content.forEach((entry, i) => {
      const [form, part] = oneOf(entry, `${at}.content.${i}`, ['text', 'json', 'image'], 'ToolResultContentBlock');
      if (form === 'text') string(part, `${at}.content.${i}.text`);
      if (form === 'json' && !isObject(part)) constraint(`${at}.content.${i}.json`, 'be a JSON object');
      if (form === 'image') image(part, `${at}.content.${i}.image`);
    });
    return { kind, id };
  }
  return { kind };
}

/** The messages; returns whether any carries toolUse or toolResult blocks. */
function messages(value: unknown): boolean {
  const all = list(value, 'messages');
  if (all.length === 0) fail('A conversation must start with a user message. Try again with a conversation that starts with a user message.');
  let usesTools = false;
  let pendingToolUses: string[] = [];
  all.forEach((entry, i) => {
    const path = `messages.${i}`;
    const message = object(entry, path, ['role', 'content']);
    oneValue(message.role, `${path}.role`, ['user', 'assistant']);
    if (i === 0 && message.role !== 'user') fail('A conversation must start with a user message. Try again with a conversation that starts with a user message.');
    if (i > 0 && message.role === (all[i - 1] as Json).role) {
      fail('A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again.');
    }
    const content = list(message.content, `${path}.content`);
    if (content.length === 0) fail(`The content field in the Message object at ${path} is empty. Add a ContentBlock object to the content field and try again.`);
    const blocks = content.map((block, j) => contentBlock(block, `${path}.content.${j}`, message.role as string));
    if (blocks.every((block) => block.kind === 'cachePoint')) fail(NOTHING_TO_CACHE);
    const idsOf = (kind: string) => blocks.filter((block) => block.kind === kind).map((block) => block.id!);
    const uses = idsOf('toolUse');
    const results = idsOf('toolResult');
    usesTools ||= uses.length > 0 || results.length > 0;
    if (duplicates(uses).length > 0) fail(`The toolUse blocks at ${path}.content contain duplicate Ids: ${duplicates(uses).join(', ')}`);
    if (duplicates(results).length > 0) fail(`The toolResult blocks at ${path}.content contain duplicate Ids: ${duplicates(results).join(', ')}`);
    if (message.role === 'user') {
      if (results.length > pendingToolUses.length) fail(`The number of toolResult blocks at ${path}.content exceeds the number of toolUse blocks of previous turn.`);
      const stray = results.find((id) => !pendingToolUses.includes(id));
      if (stray !== undefined) fail(`The toolResult block with toolUseId ${stray} at ${path}.content answers no toolUse block of the previous turn.`);
      const missing = pendingToolUses.filter((id) => !results.includes(id));
      if (missing.length > 0) fail(`Expected toolResult blocks at ${path}.content for the following Ids: ${missing.join(', ')}`);
    }
    pendingToolUses = uses;
  });
  return usesTools;
}

function system(value: unknown): void {
  list(value, 'system').forEach((entry, i) => {
    const [kind, member] = oneOf(entry, `system.${i}`, ['text', 'cachePoint'], 'SystemContentBlock');
    if (kind === 'text') nonBlank(member, `system.${i}.text`, 'SystemContentBlock');
    if (kind === 'cachePoint') {
      if (i === 0) fail(NOTHING_TO_CACHE);
      cachePoint(member, `system.${i}.cachePoint`);
    }
  });
}

function inferenceConfig(value: unknown): void {
  const config = object(value, 'inferenceConfig', ['maxTokens', 'temperature', 'topP', 'stopSequences']);
  if (config.maxTokens !== undefined) number(config.maxTokens, 'inferenceConfig.maxTokens', 1, Number.MAX_SAFE_INTEGER, true);
  if (config.temperature !== undefined) number(config.temperature, 'inferenceConfig.temperature', 0, 1);
  if (config.topP !== undefined) number(config.topP, 'inferenceConfig.topP', 0, 1);
  if (config.stopSequences !== undefined) {
    list(config.stopSequences, 'inferenceConfig.stopSequences').forEach((entry, i) => {
      if (string(entry, `inferenceConfig.stopSequences.${i}`) === '') constraint(`inferenceConfig.stopSequences.${i}`, 'have length greater than or equal to 1');
    });
  }
}

function toolConfig(value: unknown): void {
  const config = object(value, 'toolConfig', ['tools', 'toolChoice']);
  const names: string[] = [];
  list(config.tools, 'toolConfig.tools', 1).forEach((entry, i) => {
    const path = `toolConfig.tools.${i}`;
    const [kind, member] = oneOf(entry, path, ['toolSpec', 'cachePoint'], 'Tool');
    if (kind === 'cachePoint') return cachePoint(member, `${path}.cachePoint`);
    const spec = object(member, `${path}.toolSpec`, ['name', 'description', 'inputSchema', 'strict']);
    names.push(string(spec.name, `${path}.toolSpec.name`, NAME));
    if (spec.description !== undefined && string(spec.description, `${path}.toolSpec.description`) === '') {
      constraint(`${path}.toolSpec.description`, 'have length greater than or equal to 1');
    }
    const [, schema] = oneOf(spec.inputSchema, `${path}.toolSpec.inputSchema`, ['json'], 'ToolInputSchema');
    if (!isObject(schema)) constraint(`${path}.toolSpec.inputSchema.json`, 'be a JSON object');
    if (spec.strict !== undefined && typeof spec.strict !== 'boolean') constraint(`${path}.toolSpec.strict`, 'be a boolean');
  });
  if (duplicates(names).length > 0) fail(`The toolConfig.tools field contains duplicate tool names: ${duplicates(names).join(', ')}`);
  if (config.toolChoice === undefined) return;
  const [choice, member] = oneOf(config.toolChoice, 'toolConfig.toolChoice', ['auto', 'any', 'tool'], 'ToolChoice');
  const chosen = object(member, `toolConfig.toolChoice.${choice}`, choice === 'tool' ? ['name'] : []);
  if (choice === 'tool' && !names.includes(string(chosen.name, 'toolConfig.toolChoice.tool.name', NAME))) {
    fail(`The tool ${String(chosen.name)} named in toolConfig.toolChoice.tool is not defined in toolConfig.tools.`);
  }
}

function map(value: unknown, path: string, check: (entry: unknown, at: string) => void): void {
  if (!isObject(value)) constraint(path, 'be a map');
  for (const [key, entry] of Object.entries(value as Json)) check(entry, join(path, key));
}

const TOP_LEVEL = [
  'messages', 'system', 'inferenceConfig', 'toolConfig', 'additionalModelRequestFields', 'additionalModelResponseFieldPaths',
  'guardrailConfig', 'promptVariables', 'requestMetadata', 'performanceConfig',
];

/** Refuses a Converse request body that the service would refuse, with a {@link BedrockError}. */
export function validateConverseBody(body: unknown, stream: boolean): void {
  if (!isObject(body)) fail('The request body must be a JSON object.');
  const request = object(body, '', TOP_LEVEL);
  const usesTools = messages(request.messages);
  if (request.system !== undefined) system(request.system);
  if (request.inferenceConfig !== undefined) inferenceConfig(request.inferenceConfig);
  if (request.toolConfig !== undefined) toolConfig(request.toolConfig);
  if (usesTools && request.toolConfig === undefined) fail('The toolConfig field must be defined when using toolUse and toolResult content blocks.');
  if (request.additionalModelRequestFields !== undefined && !isObject(request.additionalModelRequestFields)) {
    constraint('additionalModelRequestFields', 'be a JSON object');
  }
  if (request.additionalModelResponseFieldPaths !== undefined) {
    list(request.additionalModelResponseFieldPaths, 'additionalModelResponseFieldPaths').forEach((entry, i) => {
      string(entry, `additionalModelResponseFieldPaths.${i}`, /^\/.*/);
    });
  }
  if (request.guardrailConfig !== undefined) {
    const guardrail = object(request.guardrailConfig, 'guardrailConfig', ['guardrailIdentifier', 'guardrailVersion', 'trace', ...(stream ? ['streamProcessingMode'] : [])]);
    string(guardrail.guardrailIdentifier, 'guardrailConfig.guardrailIdentifier');
    string(guardrail.guardrailVersion, 'guardrailConfig.guardrailVersion', /^(([1-9][0-9]{0,7})|(DRAFT))$/);
    if (guardrail.trace !== undefined) oneValue(guardrail.trace, 'guardrailConfig.trace', ['enabled', 'disabled', 'enabled_full']);
    if (guardrail.streamProcessingMode !== undefined) oneValue(guardrail.streamProcessingMode, 'guardrailConfig.streamProcessingMode', ['sync', 'async']);
  }
  if (request.promptVariables !== undefined) {
    map(request.promptVariables, 'promptVariables', (entry, at) => void string(oneOf(entry, at, ['text'], 'PromptVariableValues')[1], `${at}.text`));
  }
  if (request.requestMetadata !== undefined) map(request.requestMetadata, 'requestMetadata', (entry, at) => void string(entry, at));
  if (request.performanceConfig !== undefined) {
    oneValue(object(request.performanceConfig, 'performanceConfig', ['latency']).latency, 'performanceConfig.latency', ['standard', 'optimized']);
  }
}

/** A block of a planned answer. */
type Block = { text: string } | { toolUse: { toolUseId: string; name: string; input: Record<string, unknown> } } | { reasoning: string; signature: string };

/** An answer before it takes the form of one operation or the other. */
export interface Answer {
  blocks: Block[];
  stopReason: string;
  usage: { inputTokens: number; outputTokens: number; totalTokens: number; cacheReadInputTokens: number; cacheWriteInputTokens: number };
}

const words = (text: string) => text.split(/\s+/).filter(Boolean).length;

/** The texts of a request: system, text blocks and text tool results. */
function requestTexts(body: Json): string[] {
  const texts = ((body.system as Json[] | undefined) ?? []).flatMap((block) => (typeof block.text === 'string' ? [block.text] : []));
  for (const message of body.messages as { content: Json[] }[]) {
    for (const block of message.content) {
      if (typeof block.text === 'string') texts.push(block.text);
      const results = (block.toolResult as { content: Json[] } | undefined)?.content ?? [];
      texts.push(...results.flatMap((part) => (typeof part.text === 'string' ? [part.text] : [])));
    }
  }
  return texts;
}

/** The last text of the last user message (a text block, else a text tool result). */
function lastUserText(body: Json): string {
  const user = (body.messages as { role: string; content: Json[] }[]).filter((message) => message.role === 'user').at(-1)!;
  const texts = user.content.flatMap((block) => {
    if (typeof block.text === 'string') return [block.text];
    return ((block.toolResult as { content: Json[] } | undefined)?.content ?? []).flatMap((part) => (typeof part.text === 'string' ? [part.text] : []));
  });
  return texts.at(-1) ?? '';
}

/** The answer a reply scripts for a valid request body. */
export function planAnswer(reply: Extract<BedrockReply, { kind: 'text' | 'tools' | 'thinking' }>, body: Json): Answer {
  const blocks: Block[] = [];
  let stopReason = 'end_turn';
  if (reply.kind === 'text') {
    blocks.push({ text: reply.text ?? `echo: ${lastUserText(body)}` });
    stopReason = reply.stopReason ?? stopReason;
  } else if (reply.kind === 'thinking') {
    blocks.push({ reasoning: reply.thinking, signature: Buffer.from(`signature of ${reply.thinking}`).toString('base64') }, { text: reply.text });
  } else {
    if (reply.thinking !== undefined) blocks.push({ reasoning: reply.thinking, signature: Buffer.from(`signature of ${reply.thinking}`).toString('base64') });
    if (reply.text !== undefined) blocks.push({ text: reply.text });
    for (const call of reply.calls) blocks.push({ toolUse: { toolUseId: `tooluse_${randomBytes(16).toString('base64url').slice(0, 22)}`, ...call } });
    stopReason = 'tool_use';
  }
  const output = blocks.reduce((sum, block) => sum + words('text' in block ? block.text : 'reasoning' in block ? block.reasoning : JSON.stringify(block.toolUse.input)), 0);
  const given: StandInUsage = reply.usage ?? {};
  const input = given.input ?? Math.max(1, words(requestTexts(body).join(' ')));
  const usage = { inputTokens: input, outputTokens: given.output ?? Math.max(1, output), cacheReadInputTokens: given.cacheRead ?? 0, cacheWriteInputTokens: given.cacheWrite ?? 0 };
  return { blocks, stopReason, usage: { ...usage, totalTokens: usage.inputTokens + usage.outputTokens + usage.cacheReadInputTokens + usage.cacheWriteInputTokens } };
}

/** The `converse` answer: one JSON document. */
export function converseDocument(answer: Answer): Json {
  const content = answer.blocks.map((block) => {
    if ('text' in block) return { text: block.text };
    if ('reasoning' in block) return { reasoningContent: { reasoningText: { text: block.reasoning, signature: block.signature } } };
    return { toolUse: { ...block.toolUse, type: 'tool_use' } };
  });
  return { output: { message: { role: 'assistant', content } }, stopReason: answer.stopReason, usage: answer.usage, metrics: { latencyMs: 42 } };
}

/** An event-stream message, before it is encoded. */
export interface Frame {
  messageType: 'event' | 'exception';
  /** `:event-type` of an event, `:exception-type` of an exception. */
  type: string;
  body: Json;
}

/** `text` in up to `count` pieces (at least two when it has two characters), code points kept whole. */
function pieces(text: string, count: number): string[] {
  const chars = Array.from(text);
  const size = Math.max(1, Math.ceil(chars.length / count));
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(''));
  return out.length > 0 ? out : [''];
}

/** The `converse-stream` events of an answer, in the order the service sends them. */
export function streamEvents(answer: Answer): Frame[] {
  const event = (type: string, body: Json): Frame => ({ messageType: 'event', type, body });
  const frames = [event('messageStart', { role: 'assistant' })];
  answer.blocks.forEach((block, contentBlockIndex) => {
    const delta = (value: Json) => event('contentBlockDelta', { contentBlockIndex, delta: value });
    if ('text' in block) frames.push(...pieces(block.text, 3).map((text) => delta({ text })));
    if ('reasoning' in block) {
      frames.push(...pieces(block.reasoning, 3).map((text) => delta({ reasoningContent: { text } })), delta({ reasoningContent: { signature: block.signature } }));
    }
    if ('toolUse' in block) {
      const { toolUseId, name, input } = block.toolUse;
      frames.push(event('contentBlockStart', { contentBlockIndex, start: { toolUse: { toolUseId, name } } }));
      frames.push(...pieces(JSON.stringify(input), 3).map((piece) => delta({ toolUse: { input: piece } })));
    }
    frames.push(event('contentBlockStop', { contentBlockIndex }));
  });
  frames.push(event('messageStop', { stopReason: answer.stopReason }), event('metadata', { usage: answer.usage, metrics: { latencyMs: 42 } }));
  return frames;
}

const codec = new EventStreamCodec(toUtf8, fromUtf8);
const PADDING = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/** One frame in the AWS event-stream encoding; events carry a `p` padding member, as the service's do. */
export function encodeFrame(frame: Frame, sequence: number): Uint8Array {
  const text = (value: string) => ({ type: 'string' as const, value });
  const headers: Record<string, { type: 'string'; value: string }> =
    frame.messageType === 'event'
      ? { ':event-type': text(frame.type), ':content-type': text('application/json'), ':message-type': text('event') }
      : { ':message-type': text('exception'), ':exception-type': text(frame.type), ':content-type': text('application/json') };
  const body = frame.messageType === 'event' ? { ...frame.body, p: PADDING.slice(0, 2 + ((sequence * 7) % 50)) } : frame.body;
  return codec.encode({ headers, body: fromUtf8(JSON.stringify(body)) });
}
