import { invalidParameter } from '../errors';

type Json = Record<string, unknown>;

/** The Responses API's parameters whose chat form has the same name and meaning. */
const SAME_MEANING = ['temperature', 'top_p', 'top_k', 'stream', 'provider', 'models', 'parallel_tool_calls', 'reasoning', 'user'] as const;

/**
 * The items of a Responses request's `input` (docs/api.md#the-responses-api): a string is one
 * user message; an array is taken as it is, each item an object. What a stored response keeps and
 * a continuation sends again.
 */
export function inputItems(input: unknown): Json[] {
  if (typeof input === 'string') return [{ type: 'message', role: 'user', content: input }];
  if (!Array.isArray(input)) return [];
  return input.map((item, i) => asObject(item, `input[${i}]`));
}

/**
 * A Responses request as the chat request the gateway routes, limits and accounts:
 * `instructions` as a system message, then the conversation: a continued response's items
 * (`previous`, its input and output), then this request's. Messages' parts become chat parts,
 * `function_call` items the assistant's `tool_calls`, `function_call_output` items `tool`
 * messages, reasoning items the next assistant message's `reasoning_details` (their
 * `encrypted_content` as its signature, so a provider's signed thinking comes back to it);
 * `max_output_tokens` becomes `max_tokens`, `text.format` `response_format`, `metadata` is the
 * response's own and not sent.
 */
export function chatBodyOfResponses(body: Readonly<Json>, previous: readonly Json[] = []): { chat: Json; customTools: ReadonlySet<string> } {
  const chat: Json = { model: body.model };
  for (const name of SAME_MEANING) if (body[name] !== undefined && body[name] !== null) chat[name] = body[name];
  if (typeof body.max_output_tokens === 'number') chat.max_tokens = body.max_output_tokens;
  const messages: Json[] = [];
  if (typeof body.instructions === 'string' && body.instructions !== '') messages.push({ role: 'system', content: body.instructions });
  const conversation = new Conversation(messages);
  previous.forEach((item, i) => conversation.add(item, `previous_response_id (item ${i})`));
  inputItems(body.input).forEach((item, i) => conversation.add(item, `input[${i}]`));
  chat.messages = messages;
  // The request's tools, and those items added (`additional_tools`, as agents send them).
  const offered = [...(Array.isArray(body.tools) ? body.tools.map((tool, i) => [tool, `tools[${i}]`] as const) : []), ...conversation.addedTools];
  const customTools = new Set<string>();
  const tools = offered.flatMap(([tool, where]) => chatTools(asObject(tool, where), where, customTools));
  if (tools.length > 0) chat.tools = tools;
  const choice = toolChoice(body.tool_choice);
  if (choice !== undefined && tools.length > 0) chat.tool_choice = choice;
  const format = ((body.text as Json | undefined)?.format as Json | undefined) ?? undefined;
  if (format?.type === 'json_schema') {
    const { type: _type, name, schema, strict, description } = format;
    chat.response_format = { type: 'json_schema', json_schema: { name, schema, ...(strict !== undefined ? { strict } : {}), ...(description !== undefined ? { description } : {}) } };
  } else if (format?.type === 'json_object') chat.response_format = { type: 'json_object' };
  return { chat, customTools };
}

/**
 * A tool as the chat tools it means: a function tool (`{type: "function", name, parameters}`)
 * as itself, a `namespace` as the tools it groups, a `custom` tool (free-form input) as a
 * function of one string, `input`, its name noted in `customTools` so its calls come back as
 * custom tool calls. A tool the provider would run itself (`web_search`, `file_search`,
 * `code_interpreter`, `mcp`...) has no chat form: it is left out, as agents offer them by
 * default, and never sent to a provider.
 */
function chatTools(tool: Json, where: string, customTools: Set<string>): Json[] {
  if (tool.type === 'namespace') {
    const tools = Array.isArray(tool.tools) ? tool.tools : [];
    return tools.flatMap((inner, j) => chatTools(asObject(inner, `${where}.tools[${j}]`), `${where}.tools[${j}]`, customTools));
  }
  if (tool.type === 'custom') {
    const custom = chatTool({ ...tool, parameters: CUSTOM_INPUT, strict: undefined }, where);
    customTools.add(tool.name as string);
    return [custom];
  }
  return tool.type === 'function' ? [chatTool(tool, where)] : [];
}

/** A custom tool's input as a function's parameters: one free-form string. */
const CUSTOM_INPUT: Json = { type: 'object', properties: { input: { type: 'string', description: 'The input, free-form text as the tool describes it.' } }, required: ['input'], additionalProperties: false };

/** A function tool as a chat tool. */
function chatTool(tool: Json, where: string): Json {
  if (typeof tool.name !== 'string' || tool.name === '') throw invalidParameter(`${where}.name`, 'must be a non-empty string');
  const fn: Json = { name: tool.name, parameters: tool.parameters ?? { type: 'object', properties: {} } };
  if (typeof tool.description === 'string') fn.description = tool.description;
  if (typeof tool.strict === 'boolean') fn.strict = tool.strict;
  return { type: 'function', function: fn };
}

function toolChoice(raw: unknown): unknown {
  if (raw === 'auto' || raw === 'none' || raw === 'required') return raw;
  const choice = raw as Json | undefined;
  if (choice?.type === 'function' && typeof choice.name === 'string') return { type: 'function', function: { name: choice.name } };
  return undefined;
}

/**
 * The chat messages a run of items makes: a `function_call` joins the assistant message just
 * before it (one turn's text and calls are one message), reasoning waits for the assistant
 * message it came with.
 */
class Conversation {
  private reasoning: Json[] = [];
  /** Tools items added (`additional_tools`), each with where it was. */
  readonly addedTools: (readonly [unknown, string])[] = [];

  constructor(private readonly messages: Json[]) {}

  add(item: Json, where: string): void {
    switch (item.type ?? 'message') {
      case 'message':
        return this.message(item, where);
      case 'additional_tools':
        (Array.isArray(item.tools) ? item.tools : []).forEach((tool, j) => this.addedTools.push([tool, `${where}.tools[${j}]`]));
        return;
      case 'function_call':
      case 'custom_tool_call': {
        if (typeof item.call_id !== 'string' || typeof item.name !== 'string') throw invalidParameter(where, `a ${String(item.type)} needs a call_id and a name`);
        const args = item.type === 'custom_tool_call' ? JSON.stringify({ input: String(item.input ?? '') }) : typeof item.arguments === 'string' ? item.arguments : '{}';
        const call = { id: item.call_id, type: 'function', function: { name: item.name, arguments: args } };
        const last = this.messages.at(-1);
        if (last?.role === 'assistant' && this.reasoning.length === 0) last.tool_calls = [...((last.tool_calls as Json[] | undefined) ?? []), call];
        else this.assistant({ role: 'assistant', content: null, tool_calls: [call] });
        return;
      }
      case 'function_call_output':
      case 'custom_tool_call_output': {
        if (typeof item.call_id !== 'string') throw invalidParameter(`${where}.call_id`, 'must be a string');
        const output = typeof item.output === 'string' ? item.output : Array.isArray(item.output) ? item.output.map((part, k) => chatPart(asObject(part, `${where}.output[${k}]`), `${where}.output[${k}]`)) : '';
        this.messages.push({ role: 'tool', tool_call_id: item.call_id, content: output });
        return;
      }
      case 'reasoning':
        this.reasoning.push(reasoningDetail(item));
        return;
      default:
        throw invalidParameter(`${where}.type`, `${JSON.stringify(item.type)} items are not supported here`);
    }
  }

  private message(item: Json, where: string): void {
    const role = item.role;
    if (role !== 'user' && role !== 'assistant' && role !== 'system' && role !== 'developer') throw invalidParameter(`${where}.role`, 'must be user, assistant, system or developer');
    const content =
      typeof item.content === 'string'
        ? item.content
        : Array.isArray(item.content)
          ? item.content.map((part, k) => chatPart(asObject(part, `${where}.content[${k}]`), `${where}.content[${k}]`))
          : undefined;
    if (content === undefined) throw invalidParameter(`${where}.content`, 'must be a string or an array of content parts');
    if (role === 'assistant') this.assistant({ role, content });
    else this.messages.push({ role, content });
  }

  private assistant(message: Json): void {
    if (this.reasoning.length > 0) message.reasoning_details = this.reasoning;
    this.reasoning = [];
    this.messages.push(message);
  }
}

/**
 * A reasoning item as a chat reasoning detail: its text (content, else summary) and its opaque
 * `encrypted_content` as the signature; one with no text is encrypted thinking, its data that.
 */
function reasoningDetail(item: Json): Json {
  const texts = (list: unknown) => (Array.isArray(list) ? list.map((part) => String((part as Json | null)?.text ?? '')).join('') : '');
  const text = texts(item.content) || texts(item.summary);
  if (text === '' && typeof item.encrypted_content === 'string') return { type: 'reasoning.encrypted', data: item.encrypted_content, format: 'anthropic-claude-v1' };
  return { type: 'reasoning.text', text, ...(typeof item.encrypted_content === 'string' ? { signature: item.encrypted_content } : {}), format: 'anthropic-claude-v1' };
}

/** A Responses content part as a chat part: input and output text as text, an image by its URL. */
function chatPart(part: Json, where: string): Json {
  switch (part.type) {
    case 'input_text':
    case 'output_text':
    case 'text':
      if (typeof part.text !== 'string') throw invalidParameter(`${where}.text`, 'must be a string');
      return { type: 'text', text: part.text };
    case 'refusal':
      return { type: 'text', text: String(part.refusal ?? '') };
    case 'input_image':
      if (typeof part.image_url !== 'string') throw invalidParameter(`${where}.image_url`, 'must be a URL or a data URL (file ids are not supported here)');
      return { type: 'image_url', image_url: { url: part.image_url, ...(typeof part.detail === 'string' ? { detail: part.detail } : {}) } };
    default:
      throw invalidParameter(`${where}.type`, `${JSON.stringify(part.type)} parts are not supported here`);
  }
}

function asObject(value: unknown, where: string): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalidParameter(where, 'must be an object');
  return value as Json;
}
