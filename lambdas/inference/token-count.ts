type Json = Record<string, unknown>;

/** Tokens counted for an image, whatever its size: Anthropic's figure for one of about a megapixel. */
const IMAGE_TOKENS = 1_600;
/** Tokens a message's role and boundaries take. */
const MESSAGE_TOKENS = 4;
/** Characters a token of text takes, on average, in the tokenizers of the models served. */
const CHARACTERS_PER_TOKEN = 4;

/**
 * An estimate of the prompt tokens of a chat request (`POST /messages/count_tokens`,
 * docs/api.md#the-messages-api): its text, tool calls, reasoning and tool definitions at
 * {@link CHARACTERS_PER_TOKEN} characters a token, {@link IMAGE_TOKENS} an image, and
 * {@link MESSAGE_TOKENS} a message. An estimate, not any model's count: no provider is asked.
 */
export function estimatedPromptTokens(body: Readonly<Json>): number {
  let characters = 0;
  let images = 0;
  const messages = Array.isArray(body.messages) ? (body.messages as Json[]) : [];
  for (const message of messages) {
    const content = message?.content;
    if (typeof content === 'string') characters += content.length;
    for (const part of Array.isArray(content) ? (content as Json[]) : []) {
      if (part?.type === 'image_url') images++;
      else if (typeof part?.text === 'string') characters += part.text.length;
    }
    for (const call of Array.isArray(message?.tool_calls) ? (message.tool_calls as Json[]) : []) characters += JSON.stringify(call?.function ?? '').length;
    for (const detail of Array.isArray(message?.reasoning_details) ? (message.reasoning_details as Json[]) : []) characters += String(detail?.text ?? '').length;
  }
  if (Array.isArray(body.tools)) characters += JSON.stringify(body.tools).length;
  return Math.ceil(characters / CHARACTERS_PER_TOKEN) + images * IMAGE_TOKENS + messages.length * MESSAGE_TOKENS;
}
