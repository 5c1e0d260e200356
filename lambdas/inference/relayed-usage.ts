/** Token counts of one completed request, as the provider reported them (or estimated). */
export interface CompletionUsage {
  promptTokens: number;
  completionTokens: number;
}


/**
 * What a stream the client left had generated, when the provider's usage never came: tokens
 * estimated at 4 characters each (OpenAI's rule of thumb for English text), the prompt from
 * its messages' text, the completion from the text relayed. Charged instead of the whole answer
 * the provider would have gone on to write, which it was told to stop.
 */
export const CHARACTERS_PER_TOKEN = 4;

/** The tokens estimated for a text of `characters` characters, rounded up. */
export function estimatedTokens(characters: number): number {
  return Math.ceil(characters / CHARACTERS_PER_TOKEN);
}

/** The characters a chunk adds to the answer: content, reasoning, refusal and tool call arguments of each choice. */
export function relayedCharacters(chunk: Readonly<Record<string, unknown>>): number {
  if (!Array.isArray(chunk.choices)) return 0;
  let characters = 0;
  for (const choice of chunk.choices) {
    const delta = (choice as { delta?: Record<string, unknown> } | null)?.delta;
    if (!delta || typeof delta !== 'object') continue;
    for (const member of ['content', 'reasoning', 'refusal']) characters += textLength(delta[member]);
    if (Array.isArray(delta.tool_calls)) {
      for (const call of delta.tool_calls) characters += textLength((call as { function?: { arguments?: unknown } } | null)?.function?.arguments);
    }
  }
  return characters;
}

/** The characters of a request's messages' text: string contents and text parts. */
export function promptCharacters(messages: unknown): number {
  if (!Array.isArray(messages)) return 0;
  let characters = 0;
  for (const message of messages) {
    const content = (message as { content?: unknown } | null)?.content;
    if (typeof content === 'string') characters += content.length;
    else if (Array.isArray(content)) for (const part of content) characters += textLength((part as { text?: unknown } | null)?.text);
  }
  return characters;
}

/** What to charge for a stream cut short: the provider's last usage if it sent one, else the estimate. */
export function cutShortUsage(reported: CompletionUsage | undefined, promptChars: number, relayedChars: number): CompletionUsage {
  return reported ?? { promptTokens: estimatedTokens(promptChars), completionTokens: estimatedTokens(relayedChars) };
}

const textLength = (value: unknown): number => (typeof value === 'string' ? value.length : 0);
