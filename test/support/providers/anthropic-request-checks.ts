/** A request the stand-in refuses, answered as `{"type":"error","error":{"type","message"}}` with its status. */
export class AnthropicRefusal extends Error {
  constructor(
    readonly status: number,
    readonly errorType: string,
    message: string,
  ) {
    super(message);
  }
}

/** A content block of a request that passed {@link checkMessagesRequest}, as far as the answers read it. */
export interface CheckedBlock {
  type: 'text' | 'image' | 'tool_use' | 'tool_result' | 'thinking' | 'redacted_thinking';
  text?: string;
  content?: string | CheckedBlock[];
}

/** A request body that passed {@link checkMessagesRequest}, as far as the answers read it. */
export interface CheckedRequest {
  model: string;
  stream?: boolean;
  system?: string | { text: string }[];
  stop_sequences?: string[];
  messages: { role: 'user' | 'assistant'; content: string | CheckedBlock[] }[];
}

type Json = Record<string, unknown>;

const TOP_LEVEL = ['model', 'messages', 'max_tokens', 'system', 'metadata', 'stop_sequences', 'stream', 'temperature', 'top_p', 'top_k', 'tools', 'tool_choice', 'thinking', 'service_tier'];
const BLOCK_MEMBERS: Record<string, string[]> = {
  text: ['type', 'text', 'cache_control', 'citations'],
  image: ['type', 'source', 'cache_control'],
  tool_use: ['type', 'id', 'name', 'input', 'cache_control'],
  tool_result: ['type', 'tool_use_id', 'content', 'is_error', 'cache_control'],
  thinking: ['type', 'thinking', 'signature'],
  redacted_thinking: ['type', 'data'],
};
const ASSISTANT_ONLY = ['tool_use', 'thinking', 'redacted_thinking'];
const IMAGE_MEDIA_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'];
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const MAX_CACHE_BREAKPOINTS = 4;

function invalid(message: string): never {
  throw new AnthropicRefusal(400, 'invalid_request_error', message);
}

const at = (path: string, key: string | number): string => (path ? `${path}.${key}` : String(key));
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
/** `'a', 'b' or 'c'`, as the API lists the values it takes. */
const quoted = (values: readonly string[]): string => values.map((value) => `'${value}'`).join(', ').replace(/, ([^,]+)$/, ' or $1');

function object(value: unknown, path: string): Json {
  if (!isObject(value)) invalid(`${path}: Input should be a valid dictionary or object`);
  return value;
}

function list(value: unknown, path: string): unknown[] {
  if (!Array.isArray(value)) invalid(`${path}: Input should be a valid list`);
  return value;
}

function onlyMembers(value: Json, allowed: readonly string[], path: string): void {
  const extra = Object.keys(value).find((key) => !allowed.includes(key));
  if (extra !== undefined) invalid(`${at(path, extra)}: Extra inputs are not permitted`);
}

function required(value: Json, key: string, path: string): unknown {
  if (value[key] === undefined) invalid(`${at(path, key)}: Field required`);
  return value[key];
}

function string(value: unknown, path: string): string {
  if (typeof value !== 'string') invalid(`${path}: Input should be a valid string`);
  return value;
}

function oneOf(value: unknown, allowed: readonly string[], path: string): string {
  if (typeof value !== 'string' || !allowed.includes(value)) invalid(`${path}: Input should be ${quoted(allowed)}`);
  return value;
}

function integer(value: unknown, path: string, min: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value)) invalid(`${path}: Input should be a valid integer`);
  if (value < min) invalid(`${path}: Input should be greater than or equal to ${min}`);
  return value;
}

function numberIn(value: unknown, path: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) invalid(`${path}: Input should be a valid number`);
  if (value < min) invalid(`${path}: Input should be greater than or equal to ${min}`);
  if (value > max) invalid(`${path}: Input should be less than or equal to ${max}`);
  return value;
}

/** Walks a request, counting `cache_control` breakpoints as it goes. */
class RequestWalk {
  cacheBreakpoints = 0;

  cacheControl(block: Json, path: string): void {
    if (block.cache_control === undefined || block.cache_control === null) return;
    const control = object(block.cache_control, at(path, 'cache_control'));
    onlyMembers(control, ['type', 'ttl'], at(path, 'cache_control'));
    oneOf(required(control, 'type', at(path, 'cache_control')), ['ephemeral'], at(path, 'cache_control.type'));
    if (control.ttl !== undefined) oneOf(control.ttl, ['5m', '1h'], at(path, 'cache_control.ttl'));
    this.cacheBreakpoints++;
  }

  textBlock(block: Json, path: string): void {
    const text = string(required(block, 'text', path), at(path, 'text'));
    if (text === '') invalid(`${path}: text content blocks must be non-empty`);
    if (text.trim() === '') invalid(`${path}: text content blocks must contain non-whitespace text`);
    if (block.citations !== undefined && block.citations !== null) list(block.citations, at(path, 'citations'));
    this.cacheControl(block, path);
  }

  system(value: unknown): void {
    if (typeof value === 'string') return;
    list(value, 'system').forEach((item, i) => {
      const block = object(item, `system.${i}`);
      onlyMembers(block, BLOCK_MEMBERS.text!, `system.${i}`);
      oneOf(required(block, 'type', `system.${i}`), ['text'], `system.${i}.type`);
      this.textBlock(block, `system.${i}`);
    });
  }

  image(block: Json, path: string): void {
    const sourcePath = at(path, 'source');
    const source = object(required(block, 'source', path), sourcePath);
    const type = oneOf(required(source, 'type', sourcePath), ['base64', 'url'], at(sourcePath, 'type'));
    if (type === 'base64') {
      onlyMembers(source, ['type', 'media_type', 'data'], sourcePath);
      oneOf(required(source, 'media_type', sourcePath), IMAGE_MEDIA_TYPES, at(sourcePath, 'media_type'));
      if (string(required(source, 'data', sourcePath), at(sourcePath, 'data')) === '') invalid(`${sourcePath}.data: image data must be non-empty`);
    } else {
      onlyMembers(source, ['type', 'url'], sourcePath);
      const url = string(required(source, 'url', sourcePath), at(sourcePath, 'url'));
      if (!/^https?:\/\/\S+$/.test(url)) invalid(`${sourcePath}.url: Input should be a valid URL`);
    }
    this.cacheControl(block, path);
  }

  toolResultContent(value: unknown, path: string): void {
    if (value === undefined || typeof value === 'string') return;
    list(value, path).forEach((item, i) => {
      const block = object(item, at(path, i));
      const type = oneOf(required(block, 'type', at(path, i)), ['text', 'image'], at(path, `${i}.type`));
      onlyMembers(block, BLOCK_MEMBERS[type]!, at(path, i));
      if (type === 'text') this.textBlock(block, at(path, i));
      else this.image(block, at(path, i));
    });
  }

  /** Checks one block of a message; returns its type. */
  block(item: unknown, path: string, role: string): string {
    const block = object(item, path);
    const type = oneOf(required(block, 'type', path), Object.keys(BLOCK_MEMBERS), at(path, 'type'));
    onlyMembers(block, BLOCK_MEMBERS[type]!, path);
    if (ASSISTANT_ONLY.includes(type) && role !== 'assistant') invalid(`${path}: \`${type}\` blocks may only be used in assistant messages`);
    if (type === 'tool_result' && role !== 'user') invalid(`${path}: \`tool_result\` blocks may only be used in user messages`);
    if (type === 'text') this.textBlock(block, path);
    else if (type === 'image') this.image(block, path);
    else if (type === 'tool_use') {
      string(required(block, 'id', path), at(path, 'id'));
      string(required(block, 'name', path), at(path, 'name'));
      object(required(block, 'input', path), at(path, 'input'));
      this.cacheControl(block, path);
    } else if (type === 'tool_result') {
      string(required(block, 'tool_use_id', path), at(path, 'tool_use_id'));
      if (block.is_error !== undefined && typeof block.is_error !== 'boolean') invalid(`${path}.is_error: Input should be a valid boolean`);
      this.toolResultContent(block.content, at(path, 'content'));
      this.cacheControl(block, path);
    } else if (type === 'thinking') {
      string(required(block, 'thinking', path), at(path, 'thinking'));
      string(required(block, 'signature', path), at(path, 'signature'));
    } else string(required(block, 'data', path), at(path, 'data'));
    return type;
  }

  messages(value: unknown): void {
    const messages = list(value, 'messages');
    if (messages.length === 0) invalid('messages: at least one message is required');
    let previousRole = '';
    let pendingToolUses: string[] = [];
    const toolUseIds = new Set<string>();
    messages.forEach((item, i) => {
      const path = `messages.${i}`;
      const message = object(item, path);
      onlyMembers(message, ['role', 'content'], path);
      const role = oneOf(required(message, 'role', path), ['user', 'assistant'], `${path}.role`);
      if (i === 0 && role !== 'user') invalid('messages: first message must use the "user" role');
      if (role === previousRole) invalid(`messages: roles must alternate between "user" and "assistant", but found multiple "${role}" roles in a row`);
      const content = required(message, 'content', path);
      const isFinalAssistant = role === 'assistant' && i === messages.length - 1;
      const blocks = typeof content === 'string' ? [] : list(content, `${path}.content`);
      const empty = typeof content === 'string' ? content === '' : blocks.length === 0;
      if (empty && !isFinalAssistant) invalid(`messages.${i}: all messages must have non-empty content except for the optional final assistant message`);
      if (typeof content === 'string' && !empty && content.trim() === '') invalid(`${path}.content: text content blocks must contain non-whitespace text`);
      const types = blocks.map((block, j) => this.block(block, `${path}.content.${j}`, role));
      if (role === 'user') this.toolResults(blocks, types, pendingToolUses, i);
      pendingToolUses = blocks.filter((_, j) => types[j] === 'tool_use').map((block) => String((block as Json).id));
      for (const id of pendingToolUses) {
        if (toolUseIds.has(id)) invalid(`messages.${i}: \`tool_use\` ids must be unique, found a duplicate: ${id}`);
        toolUseIds.add(id);
      }
      if (isFinalAssistant) this.finalAssistant(content, blocks, types);
      previousRole = role;
    });
  }

  /** A user turn after an assistant turn with `tool_use` blocks answers each of them first, and nothing else. */
  toolResults(blocks: unknown[], types: string[], pending: string[], index: number): void {
    const answered = new Set<string>();
    types.forEach((type, j) => {
      if (type !== 'tool_result') return;
      const id = String((blocks[j] as Json).tool_use_id);
      if (!pending.includes(id) || answered.has(id)) {
        invalid(
          `messages.${index}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${id}. ` +
            'Each `tool_result` block must have a corresponding `tool_use` block in the previous message.',
        );
      }
      if (types.slice(0, j).some((earlier) => earlier !== 'tool_result')) invalid(`messages.${index}.content.${j}: \`tool_result\` blocks must come before any other content`);
      answered.add(id);
    });
    const missing = pending.filter((id) => !answered.has(id));
    if (missing.length === 0) return;
    invalid(
      `messages.${index - 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. ` +
        'Each `tool_use` block must have a corresponding `tool_result` block in the next message.',
    );
  }

  finalAssistant(content: unknown, blocks: unknown[], types: string[]): void {
    const last = typeof content === 'string' ? content : types.at(-1) === 'text' ? String((blocks.at(-1) as Json).text) : undefined;
    if (last !== undefined && last !== '' && /\s$/.test(last)) invalid('messages: final assistant content cannot end with trailing whitespace');
  }

  tools(value: unknown): string[] {
    const names = list(value, 'tools').map((item, i) => {
      const path = `tools.${i}`;
      const tool = object(item, path);
      onlyMembers(tool, ['type', 'name', 'description', 'input_schema', 'cache_control'], path);
      if (tool.type !== undefined && tool.type !== null) oneOf(tool.type, ['custom'], `${path}.type`);
      const name = string(required(tool, 'name', path), `${path}.name`);
      if (!TOOL_NAME.test(name)) invalid(`${path}.name: String should match pattern '${TOOL_NAME.source}'`);
      if (tool.description !== undefined) string(tool.description, `${path}.description`);
      const schema = object(required(tool, 'input_schema', path), `${path}.input_schema`);
      oneOf(required(schema, 'type', `${path}.input_schema`), ['object'], `${path}.input_schema.type`);
      this.cacheControl(tool, path);
      return name;
    });
    if (new Set(names).size !== names.length) invalid('tools: Tool names must be unique.');
    return names;
  }
}

function checkToolChoice(value: unknown, toolNames: readonly string[]): void {
  const choice = object(value, 'tool_choice');
  const type = oneOf(required(choice, 'type', 'tool_choice'), ['auto', 'any', 'tool', 'none'], 'tool_choice.type');
  onlyMembers(choice, type === 'none' ? ['type'] : type === 'tool' ? ['type', 'name', 'disable_parallel_tool_use'] : ['type', 'disable_parallel_tool_use'], 'tool_choice');
  if (choice.disable_parallel_tool_use !== undefined && typeof choice.disable_parallel_tool_use !== 'boolean') invalid('tool_choice.disable_parallel_tool_use: Input should be a valid boolean');
  if (type !== 'tool') return;
  const name = string(required(choice, 'name', 'tool_choice'), 'tool_choice.name');
  if (!toolNames.includes(name)) invalid(`tool_choice: Tool '${name}' not found in provided tools`);
}

/** Checks `thinking` against `max_tokens`; returns whether thinking is enabled. */
function checkThinking(value: unknown, maxTokens: number): boolean {
  const thinking = object(value, 'thinking');
  const type = oneOf(required(thinking, 'type', 'thinking'), ['enabled', 'disabled'], 'thinking.type');
  onlyMembers(thinking, type === 'enabled' ? ['type', 'budget_tokens'] : ['type'], 'thinking');
  if (type === 'disabled') return false;
  const budget = integer(required(thinking, 'budget_tokens', 'thinking'), 'thinking.enabled.budget_tokens', 1024);
  if (budget >= maxTokens) invalid('`max_tokens` must be greater than `thinking.budget_tokens`');
  return true;
}

/**
 * With thinking enabled, the assistant turn of the tool use a request continues (the last
 * assistant message, when tool results follow it) must start with its thinking, as Anthropic
 * refuses it otherwise.
 */
function checkThinkingFirst(messages: readonly Json[]): void {
  const index = messages.findLastIndex((message) => message.role === 'assistant');
  const content = messages[index]?.content;
  if (index < 0 || !Array.isArray(content) || !content.some((block) => (block as Json).type === 'tool_use')) return;
  const first = (content[0] as Json).type;
  if (first !== 'thinking' && first !== 'redacted_thinking') {
    invalid(`messages.${index}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${String(first)}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks).`);
  }
}

/**
 * Checks a Messages API request body as the API does (members, types, turn order, tool
 * pairing, thinking limits) and that its model is one of `models`; throws an
 * {@link AnthropicRefusal} naming the first problem found.
 */
export function checkMessagesRequest(body: unknown, models: readonly string[]): CheckedRequest {
  if (!isObject(body)) invalid('body: Input should be a valid JSON object');
  onlyMembers(body, TOP_LEVEL, '');
  const model = string(required(body, 'model', ''), 'model');
  const maxTokens = integer(required(body, 'max_tokens', ''), 'max_tokens', 1);
  const walk = new RequestWalk();
  walk.messages(required(body, 'messages', ''));
  if (body.system !== undefined) walk.system(body.system);
  const toolNames = body.tools === undefined ? [] : walk.tools(body.tools);
  if (body.tool_choice !== undefined) checkToolChoice(body.tool_choice, toolNames);
  const thinking = body.thinking === undefined ? false : checkThinking(body.thinking, maxTokens);
  if (body.metadata !== undefined) {
    const metadata = object(body.metadata, 'metadata');
    onlyMembers(metadata, ['user_id'], 'metadata');
    if (metadata.user_id !== undefined && metadata.user_id !== null) string(metadata.user_id, 'metadata.user_id');
  }
  if (body.stop_sequences !== undefined) {
    list(body.stop_sequences, 'stop_sequences').forEach((item, i) => {
      if (string(item, `stop_sequences.${i}`).trim() === '') invalid(`stop_sequences.${i}: stop sequences must contain non-whitespace`);
    });
  }
  if (body.stream !== undefined && typeof body.stream !== 'boolean') invalid('stream: Input should be a valid boolean');
  if (body.temperature !== undefined) numberIn(body.temperature, 'temperature', 0, 1);
  if (body.top_p !== undefined) numberIn(body.top_p, 'top_p', 0, 1);
  if (body.top_k !== undefined) integer(body.top_k, 'top_k', 0);
  if (body.service_tier !== undefined) oneOf(body.service_tier, ['auto', 'standard_only'], 'service_tier');
  if (thinking && body.temperature !== undefined) invalid('temperature: may not be set when thinking is enabled');
  if (thinking) checkThinkingFirst(body.messages as Json[]);
  if (walk.cacheBreakpoints > MAX_CACHE_BREAKPOINTS) invalid(`A maximum of ${MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. Found ${walk.cacheBreakpoints}.`);
  if (!models.includes(model)) throw new AnthropicRefusal(404, 'not_found_error', `model: ${model}`);
  return body as unknown as CheckedRequest;
}
