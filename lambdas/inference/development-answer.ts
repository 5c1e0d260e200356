import { contentText } from './chat-request';
import { schemaInstance, SchemaInstanceError } from './schema-instance';

/**
 * What the development provider answers a chat request, decided from the request alone:
 * - a call of one tool when `tools` are offered and `tool_choice` is not `none`, unless the last
 *   message is a tool result (then text, so an agent loop ends); its arguments are the minimal
 *   value the tool's parameters schema accepts (schema-instance.ts);
 * - otherwise text: JSON when `response_format` asks for it (`json_object`: `{"echo": <text>}`;
 *   `json_schema`: the minimal value its schema accepts), else the echoed text itself: the
 *   trailing tool results after a tool call, else the last user message.
 * Text is in pieces, one token each, as it is streamed: words (with their leading space), or a
 * JSON text's lexical tokens (strings, numbers, literals, punctuation).
 */
export type DevelopmentAnswer = { kind: 'text'; pieces: string[] } | { kind: 'tool_call'; name: string; pieces: string[] };

/** A request the development provider refuses with a 400, as a provider would (an unknown tool named, a schema it cannot meet). */
export class DevelopmentRefusal extends Error {}

interface Message {
  role?: unknown;
  content?: unknown;
}

interface FunctionDefinition {
  name: string;
  parameters?: unknown;
}

/** The development provider's answer to a chat request's body; a {@link DevelopmentRefusal} where a provider would refuse it. */
export function developmentAnswer(body: Readonly<Record<string, unknown>>): DevelopmentAnswer {
  const messages = (Array.isArray(body.messages) ? body.messages : []).filter((m): m is Message => typeof m === 'object' && m !== null);
  const lastUser = contentText([...messages].reverse().find((m) => m.role === 'user')?.content);
  const toolResults = trailingToolResults(messages);
  if (toolResults === undefined) {
    const tool = chosenTool(body.tools, body.tool_choice, lastUser);
    if (tool) return { kind: 'tool_call', name: tool.name, pieces: jsonPieces(JSON.stringify(argumentsOf(tool))) };
  }
  const echoed = toolResults ?? lastUser;
  const json = jsonText(body.response_format, echoed);
  if (json !== undefined) return { kind: 'text', pieces: jsonPieces(json) };
  return { kind: 'text', pieces: wordsOf(echoed).map((word, i) => (i === 0 ? word : ` ${word}`)) };
}

/** The words of a text, split at whitespace. */
export function wordsOf(text: string): string[] {
  return text.split(/\s+/).filter(Boolean);
}

/** A compact JSON text in its lexical tokens, which joined give the text back. */
export function jsonPieces(json: string): string[] {
  return json.match(/"(?:[^"\\]|\\.)*"|[{}[\]:,]|[^{}[\]:,"]+/g) ?? [];
}

/**
 * The text of the tool results that end the conversation, joined; undefined when the last
 * message (system and developer messages a client adds after the results aside) is no tool result.
 */
function trailingToolResults(messages: readonly Message[]): string | undefined {
  let end = messages.length;
  while (end > 0 && (messages[end - 1]!.role === 'system' || messages[end - 1]!.role === 'developer')) end--;
  let first = end;
  while (first > 0 && messages[first - 1]!.role === 'tool') first--;
  if (first === end) return undefined;
  return messages
    .slice(first, end)
    .map((m) => contentText(m.content))
    .join(' ');
}

/** The function `tool_choice` leads to among `tools`, or none when the answer is text. */
function chosenTool(tools: unknown, choice: unknown, lastUser: string): FunctionDefinition | undefined {
  const functions = (Array.isArray(tools) ? tools : []).flatMap((tool): FunctionDefinition[] => {
    const definition = tool?.type === 'function' ? tool.function : undefined;
    return typeof definition?.name === 'string' ? [definition] : [];
  });
  const named = (name: unknown) => {
    const found = functions.find((definition) => definition.name === name);
    if (!found) throw new DevelopmentRefusal(`tool_choice names the function ${JSON.stringify(name)}, which is not among tools`);
    return found;
  };
  const mode = choice ?? 'auto';
  if (mode === 'none') return undefined;
  if (typeof mode === 'object' && mode !== null) {
    const object = mode as { type?: unknown; function?: { name?: unknown }; allowed_tools?: { mode?: unknown; tools?: unknown } };
    if (object.type === 'function') return named(object.function?.name);
    if (object.type === 'allowed_tools') {
      const allowed = (Array.isArray(object.allowed_tools?.tools) ? object.allowed_tools.tools : []).map((tool: { function?: { name?: unknown } }) => named(tool?.function?.name));
      return pick(allowed, object.allowed_tools?.mode === 'required', lastUser);
    }
    throw new DevelopmentRefusal('tool_choice must be none, auto, required or name a function');
  }
  if (mode !== 'auto' && mode !== 'required') throw new DevelopmentRefusal('tool_choice must be none, auto, required or name a function');
  return pick(functions, mode === 'required', lastUser);
}

/**
 * The function the user's message names last (its own words come after what a client prepends
 * to them), else the first one.
 */
function pick(functions: readonly FunctionDefinition[], required: boolean, lastUser: string): FunctionDefinition | undefined {
  if (functions.length === 0) {
    if (required) throw new DevelopmentRefusal('tool_choice requires a tool call, but no function tools were given');
    return undefined;
  }
  let named: FunctionDefinition | undefined;
  let at = -1;
  for (const definition of functions) {
    const where = lastUser.lastIndexOf(definition.name);
    if (where > at) [named, at] = [definition, where];
  }
  return named ?? functions[0];
}

function argumentsOf(tool: FunctionDefinition): unknown {
  // A function without parameters takes none: its arguments are an empty object.
  if (tool.parameters === undefined || tool.parameters === null) return {};
  return instanceOrRefusal(tool.parameters, `the parameters of ${tool.name}`);
}

/** The JSON text `response_format` asks for, or undefined for plain text. */
function jsonText(format: unknown, echoed: string): string | undefined {
  const { type, json_schema: config } = (typeof format === 'object' && format !== null ? format : {}) as { type?: unknown; json_schema?: { schema?: unknown } };
  if (type === 'json_object' || (type === 'json_schema' && config?.schema === undefined)) return JSON.stringify({ echo: echoed });
  if (type === 'json_schema') return JSON.stringify(instanceOrRefusal(config!.schema, 'response_format.json_schema.schema'));
  return undefined;
}

function instanceOrRefusal(schema: unknown, what: string): unknown {
  try {
    return schemaInstance(schema) ?? null;
  } catch (error) {
    if (error instanceof SchemaInstanceError || error instanceof SyntaxError) throw new DevelopmentRefusal(`${what}: ${error.message}`);
    throw error;
  }
}
