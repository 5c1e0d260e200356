/**
 * A Messages API request sent to Anthropic as its client wrote it (docs/providers.md,
 * "Anthropic"): its turns, content blocks and tools in Anthropic's own form, so what the chat
 * form has no place for (redacted thinking, `cache_control` on any block, a tool result's
 * `is_error`, citations) reaches the provider. Only Anthropic's generally available members
 * are sent: a beta member a client adds is left out, as the provider would refuse it.
 */

type Json = Record<string, unknown>;

/** The member of a chat body that carries the Messages request it was read from, for an Anthropic endpoint only. */
export const MESSAGES_REQUEST_MEMBER = 'x-modelgate-messages-request';

/** Each content block's members in Anthropic's Messages API. */
const BLOCK_MEMBERS: Readonly<Record<string, readonly string[]>> = {
  text: ['type', 'text', 'cache_control', 'citations'],
  image: ['type', 'source', 'cache_control'],
  tool_use: ['type', 'id', 'name', 'input', 'cache_control'],
  tool_result: ['type', 'tool_use_id', 'content', 'is_error', 'cache_control'],
  thinking: ['type', 'thinking', 'signature'],
  redacted_thinking: ['type', 'data'],
};
const TOOL_MEMBERS = ['name', 'description', 'input_schema', 'cache_control'];

const pick = (value: Json, members: readonly string[]): Json => Object.fromEntries(members.filter((name) => value[name] !== undefined).map((name) => [name, value[name]]));
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The body sent: the translated body's model, token caps, thinking, tool choice, sampling, stop
 * sequences and metadata (each within what the endpoint and the spending estimate allow), with
 * the client's own system prompt, turns and tools. A `system` turn within the conversation joins
 * the system prompt; turns of one role in a row are one turn; tools the provider would run
 * itself (no `input_schema`) are left out, as the estimate does not cover them.
 */
export function nativeMessagesBody(native: Json, translated: Json): Json {
  const system: Json[] = systemBlocks(native.system);
  const messages: Json[] = [];
  for (const turn of Array.isArray(native.messages) ? native.messages : []) {
    if (!isObject(turn)) continue;
    const content = typeof turn.content === 'string' ? [{ type: 'text', text: turn.content }] : (Array.isArray(turn.content) ? turn.content : []).flatMap(contentBlock);
    if (turn.role === 'system') system.push(...content.filter((item) => item.type === 'text'));
    else if (messages.at(-1)?.role === turn.role) (messages.at(-1)!.content as Json[]).push(...content);
    else messages.push({ role: turn.role, content });
  }
  const body: Json = { ...translated, messages };
  delete body.system;
  if (system.length > 0) body.system = system;
  const tools = (Array.isArray(native.tools) ? native.tools : []).filter((tool): tool is Json => isObject(tool) && tool.input_schema !== undefined).map((tool) => pick(tool, TOOL_MEMBERS));
  // The translated tools may hold the JSON answer's own tool (a response format): kept after the client's.
  const answerTools = (Array.isArray(translated.tools) ? (translated.tools as Json[]) : []).filter((tool) => !tools.some((own) => own.name === tool.name));
  if (tools.length + answerTools.length > 0) body.tools = [...tools, ...answerTools];
  return body;
}

function systemBlocks(system: unknown): Json[] {
  if (typeof system === 'string') return system === '' ? [] : [{ type: 'text', text: system }];
  return (Array.isArray(system) ? system : []).flatMap(contentBlock).filter((item) => item.type === 'text');
}

/** A content block in its generally available members; a block of another kind is left out. */
function contentBlock(raw: unknown): Json[] {
  if (!isObject(raw) || typeof raw.type !== 'string') return [];
  const members = BLOCK_MEMBERS[raw.type];
  if (!members) return [];
  const block = pick(raw, members);
  if (raw.type === 'tool_result' && Array.isArray(raw.content)) block.content = raw.content.flatMap(contentBlock);
  return [block];
}
