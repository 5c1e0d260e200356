import { invalidParameter } from '../errors';

/** An image as a message carries it: inline (a data URL's media type and base64 data), or by address. */
export type ImageSource = { kind: 'data'; mediaType: string; data: string } | { kind: 'url'; url: string };

/** One piece of a turn, in the terms every provider API shares; `cache` marks a prompt-cache breakpoint after it. */
export type Part =
  | { type: 'text'; text: string; cache: boolean }
  | { type: 'image'; source: ImageSource; cache: boolean }
  | { type: 'tool_call'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'tool_result'; id: string; content: (Extract<Part, { type: 'text' | 'image' }>)[]; cache: boolean }
  | { type: 'reasoning'; text: string; signature: string | undefined }
  /** Thinking the provider encrypted (Anthropic's `redacted_thinking`), sent back as it came. */
  | { type: 'redacted_reasoning'; data: string };

/** A turn of a conversation whose roles alternate, the first the user's. */
export interface Turn {
  role: 'user' | 'assistant';
  parts: Part[];
}

/**
 * A chat request's messages as the provider APIs want them (docs/providers.md, "How a request
 * is translated"): `system` and `developer` messages lifted out; `tool` messages made the
 * user's tool results; consecutive turns of one role merged, so roles alternate.
 */
export interface Conversation {
  system: { text: string; cache: boolean }[];
  turns: Turn[];
}

type Json = Record<string, unknown>;

const DATA_URL = /^data:(image\/(?:png|jpeg|gif|webp));base64,([A-Za-z0-9+/]+={0,2})$/;

/**
 * The conversation of a chat request's `messages`. A message the translation cannot carry (an
 * image that is neither a data URL nor an http(s) address, a tool call whose arguments are not
 * a JSON object, an audio or file part) is a 400 naming it.
 */
export function conversationOf(messages: unknown): Conversation {
  if (!Array.isArray(messages)) throw invalidParameter('messages', 'must be an array');
  const conversation: Conversation = { system: [], turns: [] };
  messages.forEach((raw, i) => {
    const message = asObject(raw, `messages[${i}]`);
    const where = `messages[${i}]`;
    switch (message.role) {
      case 'system':
      case 'developer':
        for (const part of contentParts(message.content, where)) {
          if (part.type !== 'text') throw invalidParameter(`${where}.content`, 'a system message holds text only');
          conversation.system.push({ text: part.text, cache: part.cache });
        }
        return;
      case 'user':
        return addTurn(conversation, 'user', contentParts(message.content, where));
      case 'assistant':
        return addTurn(conversation, 'assistant', assistantParts(message, where));
      case 'tool': {
        const id = message.tool_call_id;
        if (typeof id !== 'string' || id === '') throw invalidParameter(`${where}.tool_call_id`, 'is required on a tool message');
        const content = contentParts(message.content ?? '', where);
        const last = content.at(-1);
        const cache = last !== undefined && 'cache' in last && last.cache;
        return addTurn(conversation, 'user', [{ type: 'tool_result', id, content: content as Extract<Part, { type: 'text' | 'image' }>[], cache }]);
      }
      default:
        throw invalidParameter(`${where}.role`, `${JSON.stringify(message.role)} is not a role this provider takes`);
    }
  });
  if (conversation.turns[0]?.role !== 'user') throw invalidParameter('messages', 'must begin, after any system messages, with a user or tool message for this provider');
  return conversation;
}

/** Appends parts as a turn of `role`, merged into the last turn when it is the same role's. */
function addTurn(conversation: Conversation, role: Turn['role'], parts: Part[]): void {
  if (parts.length === 0) return;
  const last = conversation.turns.at(-1);
  if (last?.role === role) last.parts.push(...parts);
  else conversation.turns.push({ role, parts });
}

function assistantParts(message: Json, where: string): Part[] {
  const parts: Part[] = [];
  for (const detail of Array.isArray(message.reasoning_details) ? message.reasoning_details : []) {
    const { type, text, signature } = (detail ?? {}) as Json;
    if (type === 'reasoning.text' && typeof text === 'string') parts.push({ type: 'reasoning', text, signature: typeof signature === 'string' ? signature : undefined });
    const data = (detail as Json | null)?.data;
    if (type === 'reasoning.encrypted' && typeof data === 'string' && data !== '') parts.push({ type: 'redacted_reasoning', data });
  }
  if (message.content !== null && message.content !== undefined) parts.push(...contentParts(message.content, where).filter((part) => part.type !== 'text' || part.text !== ''));
  const calls = message.tool_calls;
  if (calls !== undefined && calls !== null) {
    if (!Array.isArray(calls)) throw invalidParameter(`${where}.tool_calls`, 'must be an array');
    calls.forEach((raw, j) => {
      const call = asObject(raw, `${where}.tool_calls[${j}]`);
      const fn = asObject(call.function, `${where}.tool_calls[${j}].function`);
      if (typeof call.id !== 'string' || typeof fn.name !== 'string') throw invalidParameter(`${where}.tool_calls[${j}]`, 'needs an id and a function name');
      parts.push({ type: 'tool_call', id: call.id, name: fn.name, input: argumentsOf(fn.arguments, `${where}.tool_calls[${j}].function.arguments`) });
    });
  }
  return parts;
}

function argumentsOf(raw: unknown, where: string): Record<string, unknown> {
  if (raw === undefined || raw === '') return {};
  let parsed: unknown;
  try {
    parsed = typeof raw === 'string' ? JSON.parse(raw) : raw;
  } catch {
    throw invalidParameter(where, 'is not JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw invalidParameter(where, 'must be a JSON object');
  return parsed as Record<string, unknown>;
}

/** A message's content as parts: a string is one text part; text and image parts are kept. */
function contentParts(content: unknown, where: string): Extract<Part, { type: 'text' | 'image' }>[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content, cache: false }];
  if (!Array.isArray(content)) throw invalidParameter(`${where}.content`, 'must be a string or an array of parts');
  return content.map((raw, j) => {
    const part = asObject(raw, `${where}.content[${j}]`);
    const cache = typeof part.cache_control === 'object' && part.cache_control !== null;
    if (part.type === 'text' && typeof part.text === 'string') return { type: 'text' as const, text: part.text, cache };
    if (part.type === 'image_url') {
      const url = typeof part.image_url === 'string' ? part.image_url : (part.image_url as Json | undefined)?.url;
      return { type: 'image' as const, source: imageSource(url, `${where}.content[${j}].image_url`), cache };
    }
    throw invalidParameter(`${where}.content[${j}]`, `parts of type ${JSON.stringify(part.type)} cannot be sent to this provider`);
  });
}

function imageSource(url: unknown, where: string): ImageSource {
  if (typeof url !== 'string') throw invalidParameter(where, 'needs a url');
  const data = DATA_URL.exec(url);
  if (data) return { kind: 'data', mediaType: data[1]!, data: data[2]! };
  if (/^https?:\/\//i.test(url)) return { kind: 'url', url };
  throw invalidParameter(where, 'must be a base64 data URL of a PNG, JPEG, GIF or WebP image, or an http(s) URL');
}

function asObject(value: unknown, where: string): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalidParameter(where, 'must be an object');
  return value as Json;
}
