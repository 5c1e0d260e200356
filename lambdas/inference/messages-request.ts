import { invalidParameter } from '../errors';

type Json = Record<string, unknown>;

/** The Messages API's parameters that have a chat form of the same meaning, by their chat name. */
const SAME_MEANING = ['temperature', 'top_p', 'top_k', 'stream', 'provider', 'models'] as const;

/**
 * A Messages API request (`POST /messages`, docs/api.md#the-messages-api) as the chat request the
 * gateway routes, limits and accounts: `system` as a system message, content blocks as parts,
 * `tool_use` blocks as the assistant's `tool_calls` and `tool_result` blocks as `tool` messages,
 * thinking blocks as `reasoning_details` (their signatures kept), `thinking` as `reasoning`,
 * a `system` turn within the conversation as a system message,
 * `stop_sequences` as `stop`, `metadata.user_id` as `user`. What has no chat form (beta fields
 * such as `context_management`) is left out, so no provider is sent what it would refuse.
 */
export function chatBodyOfMessages(body: Readonly<Json>): Json {
  const chat: Json = { model: body.model, max_tokens: body.max_tokens };
  for (const name of SAME_MEANING) if (body[name] !== undefined && body[name] !== null) chat[name] = body[name];
  const messages: Json[] = [];
  const system = body.system;
  if (typeof system === 'string' && system !== '') messages.push({ role: 'system', content: system });
  else if (Array.isArray(system) && system.length > 0) messages.push({ role: 'system', content: system.map((block, i) => textPart(block, `system[${i}]`)) });
  const turns = Array.isArray(body.messages) ? body.messages : [];
  turns.forEach((raw, i) => messages.push(...chatMessages(raw, `messages[${i}]`)));
  chat.messages = messages;
  if (Array.isArray(body.stop_sequences) && body.stop_sequences.length > 0) chat.stop = body.stop_sequences.slice(0, 4);
  const tools = Array.isArray(body.tools) ? body.tools.filter((tool) => (tool as Json | null)?.input_schema !== undefined) : [];
  if (tools.length > 0) chat.tools = tools.map((tool) => chatTool(tool as Json));
  const choice = toolChoice(body.tool_choice);
  if (choice !== undefined && tools.length > 0) chat.tool_choice = choice;
  if ((body.tool_choice as Json | undefined)?.disable_parallel_tool_use === true) chat.parallel_tool_calls = false;
  const reasoning = reasoningOf(body.thinking as Json | undefined, (body.output_config as Json | undefined)?.effort);
  if (reasoning) chat.reasoning = reasoning;
  const user = (body.metadata as Json | undefined)?.user_id;
  if (typeof user === 'string' && user !== '') chat.user = user;
  return chat;
}

/** Anthropic's efforts (`output_config.effort`) as the chat reasoning efforts. */
const EFFORTS: Readonly<Record<string, string>> = { low: 'low', medium: 'medium', high: 'high', max: 'high' };

/**
 * `thinking` as chat reasoning: `enabled` with its budget; `adaptive` (the model decides how
 * much) at the request's `output_config.effort`, else medium; `disabled` as none.
 */
function reasoningOf(thinking: Json | undefined, effort: unknown): Json | undefined {
  if (thinking?.type === 'enabled' && Number.isSafeInteger(thinking.budget_tokens)) return { max_tokens: thinking.budget_tokens };
  if (thinking?.type === 'adaptive') return { effort: EFFORTS[String(effort)] ?? 'medium' };
  return undefined;
}

function chatTool(tool: Json): Json {
  const fn: Json = { name: tool.name, parameters: tool.input_schema };
  if (typeof tool.description === 'string') fn.description = tool.description;
  return { type: 'function', function: fn, ...(tool.cache_control ? { cache_control: tool.cache_control } : {}) };
}

function toolChoice(raw: unknown): unknown {
  const choice = raw as Json | undefined;
  switch (choice?.type) {
    case 'auto':
      return 'auto';
    case 'any':
      return 'required';
    case 'none':
      return 'none';
    case 'tool':
      return { type: 'function', function: { name: choice.name } };
    default:
      return undefined;
  }
}

/** One Messages turn as chat messages: a user turn's tool results become `tool` messages before its other parts. */
function chatMessages(raw: unknown, where: string): Json[] {
  const turn = asObject(raw, where);
  const role = turn.role;
  if (role !== 'user' && role !== 'assistant' && role !== 'system') throw invalidParameter(`${where}.role`, 'must be user, assistant or system');
  if (typeof turn.content === 'string') return [{ role, content: turn.content }];
  // A system turn within the conversation (what newer clients send as their context changes): its text only.
  if (role === 'system' && Array.isArray(turn.content)) return [{ role, content: turn.content.map((block, j) => textPart(block, `${where}.content[${j}]`)) }];
  if (!Array.isArray(turn.content)) throw invalidParameter(`${where}.content`, 'must be a string or an array of content blocks');
  const blocks = turn.content.map((block, j) => asObject(block, `${where}.content[${j}]`));
  if (role === 'assistant') return [assistantMessage(blocks, where)];
  const out: Json[] = [];
  const parts: Json[] = [];
  blocks.forEach((block, j) => {
    if (block.type === 'tool_result') out.push({ role: 'tool', tool_call_id: block.tool_use_id, content: toolResultContent(block.content, `${where}.content[${j}]`) });
    else parts.push(contentPart(block, `${where}.content[${j}]`));
  });
  if (parts.length > 0) out.push({ role: 'user', content: parts });
  return out;
}

function assistantMessage(blocks: Json[], where: string): Json {
  const parts: Json[] = [];
  const calls: Json[] = [];
  const details: Json[] = [];
  blocks.forEach((block, j) => {
    if (block.type === 'tool_use') calls.push({ id: block.id, type: 'function', function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) } });
    else if (block.type === 'thinking') details.push({ type: 'reasoning.text', text: block.thinking, signature: block.signature, format: 'anthropic-claude-v1' });
    else if (block.type === 'redacted_thinking') details.push({ type: 'reasoning.encrypted', data: block.data, format: 'anthropic-claude-v1' });
    else parts.push(contentPart(block, `${where}.content[${j}]`));
  });
  const message: Json = { role: 'assistant', content: parts.length > 0 ? parts : null };
  if (calls.length > 0) message.tool_calls = calls;
  if (details.length > 0) message.reasoning_details = details;
  return message;
}

function toolResultContent(content: unknown, where: string): unknown {
  if (content === undefined) return '';
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw invalidParameter(`${where}.content`, 'must be a string or an array of content blocks');
  return content.map((block, k) => contentPart(asObject(block, `${where}.content[${k}]`), `${where}.content[${k}]`));
}

function textPart(raw: unknown, where: string): Json {
  const block = asObject(raw, where);
  if (block.type !== 'text' || typeof block.text !== 'string') throw invalidParameter(where, 'must be a text block');
  return { type: 'text', text: block.text, ...(block.cache_control ? { cache_control: block.cache_control } : {}) };
}

function contentPart(block: Json, where: string): Json {
  if (block.type === 'text') return textPart(block, where);
  if (block.type === 'image') {
    const source = asObject(block.source, `${where}.source`);
    const url = source.type === 'base64' ? `data:${String(source.media_type)};base64,${String(source.data)}` : source.type === 'url' ? source.url : undefined;
    if (typeof url !== 'string') throw invalidParameter(`${where}.source`, 'must be a base64 or url image source');
    return { type: 'image_url', image_url: { url }, ...(block.cache_control ? { cache_control: block.cache_control } : {}) };
  }
  throw invalidParameter(`${where}.type`, `${JSON.stringify(block.type)} blocks are not supported here`);
}

function asObject(value: unknown, where: string): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalidParameter(where, 'must be an object');
  return value as Json;
}
