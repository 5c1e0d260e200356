import { invalidParameter } from '../errors';
import { conversationOf, type Conversation } from './conversation';

/** A tool the model may call: a function with its JSON Schema. */
export interface ToolSpec {
  name: string;
  description: string | undefined;
  parameters: Record<string, unknown>;
  cache: boolean;
}

/** Whether and which tool the model must call. */
export type ToolChoice = 'auto' | 'none' | 'required' | { name: string };

/** How much the model may think: an effort, a token budget, or both. */
export interface ReasoningAsk {
  effort: 'minimal' | 'low' | 'medium' | 'high' | undefined;
  maxTokens: number | undefined;
}

/**
 * A chat request in the terms the provider APIs share (docs/providers.md, "How a request is
 * translated"), read once from the public chat body; each API renders it in its own shape.
 */
export interface ChatCall {
  conversation: Conversation;
  tools: ToolSpec[];
  toolChoice: ToolChoice | undefined;
  parallelToolCalls: boolean | undefined;
  /** The larger of `max_tokens` and `max_completion_tokens`, as the gateway capped it. */
  maxTokens: number | undefined;
  temperature: number | undefined;
  topP: number | undefined;
  topK: number | undefined;
  stop: string[];
  /** `response_format` asking for JSON: its schema (`{ type: 'object' }` for `json_object`). */
  json: { name: string; schema: Record<string, unknown> } | undefined;
  reasoning: ReasoningAsk | undefined;
  user: string | undefined;
  stream: boolean;
}

type Json = Record<string, unknown>;

/** The call of a chat request body (validated by the public schema; read defensively all the same). */
export function chatCallOf(body: Readonly<Json>): ChatCall {
  const caps = [body.max_tokens, body.max_completion_tokens].filter((value): value is number => Number.isSafeInteger(value) && (value as number) > 0);
  return {
    conversation: conversationOf(body.messages),
    tools: toolsOf(body.tools),
    toolChoice: toolChoiceOf(body.tool_choice),
    parallelToolCalls: typeof body.parallel_tool_calls === 'boolean' ? body.parallel_tool_calls : undefined,
    maxTokens: caps.length > 0 ? Math.max(...caps) : undefined,
    temperature: finite(body.temperature),
    topP: finite(body.top_p),
    topK: Number.isSafeInteger(body.top_k) && (body.top_k as number) > 0 ? (body.top_k as number) : undefined,
    stop: typeof body.stop === 'string' ? [body.stop] : Array.isArray(body.stop) ? body.stop.filter((s): s is string => typeof s === 'string' && s !== '') : [],
    json: jsonFormat(body.response_format),
    reasoning: reasoningOf(body.reasoning, body.reasoning_effort),
    user: typeof body.user === 'string' && body.user !== '' ? body.user : undefined,
    stream: body.stream === true,
  };
}

const finite = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);

function toolsOf(raw: unknown): ToolSpec[] {
  if (!Array.isArray(raw)) return [];
  return raw.map((tool, i) => {
    const fn = (tool as Json | null)?.function as Json | undefined;
    if ((tool as Json | null)?.type !== 'function' || typeof fn?.name !== 'string') throw invalidParameter(`tools[${i}]`, 'must be a function with a name');
    const parameters = typeof fn.parameters === 'object' && fn.parameters !== null ? (fn.parameters as Json) : { type: 'object', properties: {} };
    return {
      name: fn.name,
      description: typeof fn.description === 'string' ? fn.description : undefined,
      parameters,
      cache: typeof (tool as Json).cache_control === 'object' && (tool as Json).cache_control !== null,
    };
  });
}

function toolChoiceOf(raw: unknown): ToolChoice | undefined {
  if (raw === 'auto' || raw === 'none' || raw === 'required') return raw;
  const name = ((raw as Json | null)?.function as Json | undefined)?.name;
  return typeof name === 'string' ? { name } : undefined;
}

function jsonFormat(raw: unknown): ChatCall['json'] {
  const format = raw as Json | null | undefined;
  if (format?.type === 'json_object') return { name: 'json_answer', schema: { type: 'object' } };
  if (format?.type !== 'json_schema') return undefined;
  const spec = (format.json_schema ?? {}) as Json;
  const schema = typeof spec.schema === 'object' && spec.schema !== null ? (spec.schema as Json) : { type: 'object' };
  const name = typeof spec.name === 'string' && /^[a-zA-Z0-9_-]{1,64}$/.test(spec.name) ? spec.name : 'json_answer';
  return { name, schema };
}

function reasoningOf(raw: unknown, effortField: unknown): ReasoningAsk | undefined {
  const ask = (raw ?? {}) as Json;
  if (ask.enabled === false) return undefined;
  const effortValue = ask.effort ?? effortField;
  const effort = ['minimal', 'low', 'medium', 'high'].includes(effortValue as string) ? (effortValue as ReasoningAsk['effort']) : undefined;
  const maxTokens = Number.isSafeInteger(ask.max_tokens) && (ask.max_tokens as number) > 0 ? (ask.max_tokens as number) : undefined;
  if (effort === undefined && maxTokens === undefined && ask.enabled !== true) return undefined;
  return { effort, maxTokens };
}

/** Shares of the completion cap each reasoning effort may think for. */
const EFFORT_SHARE = { minimal: 0.1, low: 0.2, medium: 0.5, high: 0.8 } as const;
/** Anthropic's smallest thinking budget. */
const MIN_THINKING_TOKENS = 1024;

/**
 * The thinking budget of a call for Anthropic's models (direct or on Bedrock): its reasoning
 * tokens, else its effort's share of its completion cap (the endpoint's limit when it gives
 * none), at least {@link MIN_THINKING_TOKENS}; undefined when it asks for no reasoning.
 */
export function thinkingBudget(call: ChatCall, maxCompletionTokens: number): number | undefined {
  const ask = call.reasoning;
  if (!ask) return undefined;
  const budget = ask.maxTokens ?? Math.floor((call.maxTokens ?? maxCompletionTokens) * EFFORT_SHARE[ask.effort ?? 'medium']);
  return Math.max(MIN_THINKING_TOKENS, budget);
}

/** The completion tokens a call may take, reasoning included: its cap plus its reasoning tokens, within the endpoint's limit. */
export function completionTokens(call: ChatCall, maxCompletionTokens: number): number {
  return Math.min(maxCompletionTokens, (call.maxTokens ?? maxCompletionTokens) + (call.reasoning?.maxTokens ?? 0));
}
