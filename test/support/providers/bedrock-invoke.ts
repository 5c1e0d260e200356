import { checkMessagesRequest } from './anthropic-request-checks';
import { BedrockError, type Answer, type Frame } from './bedrock-wire';

type Json = Record<string, unknown>;

/** The Messages API version Bedrock's InvokeModel takes for Anthropic's models. */
export const BEDROCK_ANTHROPIC_VERSION = 'bedrock-2023-05-31';

/**
 * Checks an InvokeModel body for one of Anthropic's models as Bedrock does: Anthropic's Messages
 * request with `anthropic_version` and without `model` or `stream` (the operation says those),
 * every other member held to Anthropic's own checks.
 */
export function validateInvokeBody(body: Json, modelId: string): void {
  const { anthropic_version: version, ...request } = body;
  if (version !== BEDROCK_ANTHROPIC_VERSION) throw new BedrockError('ValidationException', `anthropic_version: expected '${BEDROCK_ANTHROPIC_VERSION}'`);
  for (const member of ['model', 'stream']) {
    if (member in request) throw new BedrockError('ValidationException', `Malformed input request: #: extraneous key [${member}] is not permitted, please reformat your input and try again.`);
  }
  try {
    checkMessagesRequest({ ...request, model: modelId }, [modelId]);
  } catch (error) {
    throw new BedrockError('ValidationException', (error as Error).message);
  }
}

/** An answer as Anthropic's message: its content blocks, stop reason and usage. */
export function invokeDocument(answer: Answer, modelId: string): Json {
  const content = answer.blocks.map((block) => {
    if ('text' in block) return { type: 'text', text: block.text };
    if ('reasoning' in block) return { type: 'thinking', thinking: block.reasoning, signature: block.signature };
    return { type: 'tool_use', id: block.toolUse.toolUseId, name: block.toolUse.name, input: block.toolUse.input };
  });
  return { id: `msg_bdrk_${answer.usage.totalTokens}`, type: 'message', role: 'assistant', model: modelId, content, stop_reason: answer.stopReason, stop_sequence: null, usage: usageOf(answer) };
}

function usageOf(answer: Answer): Json {
  const { inputTokens, outputTokens, cacheReadInputTokens, cacheWriteInputTokens } = answer.usage;
  return { input_tokens: inputTokens, output_tokens: outputTokens, cache_read_input_tokens: cacheReadInputTokens, cache_creation_input_tokens: cacheWriteInputTokens };
}

/** The `invoke-with-response-stream` frames of an answer: each of Anthropic's stream events a `chunk`, its JSON in `bytes` (base64). */
export function invokeStreamFrames(answer: Answer, modelId: string): Frame[] {
  const document = invokeDocument(answer, modelId);
  const events: Json[] = [{ type: 'message_start', message: { ...document, content: [], stop_reason: null, usage: { ...usageOf(answer), output_tokens: 1 } } }];
  (document.content as Json[]).forEach((block, index) => {
    const start = block.type === 'tool_use' ? { ...block, input: {} } : block.type === 'text' ? { type: 'text', text: '' } : { type: 'thinking', thinking: '', signature: '' };
    events.push({ type: 'content_block_start', index, content_block: start });
    const delta = (value: Json) => events.push({ type: 'content_block_delta', index, delta: value });
    if (block.type === 'text') delta({ type: 'text_delta', text: block.text });
    else if (block.type === 'tool_use') delta({ type: 'input_json_delta', partial_json: JSON.stringify(block.input) });
    else {
      delta({ type: 'thinking_delta', thinking: block.thinking });
      delta({ type: 'signature_delta', signature: block.signature });
    }
    events.push({ type: 'content_block_stop', index });
  });
  events.push({ type: 'message_delta', delta: { stop_reason: answer.stopReason, stop_sequence: null }, usage: { output_tokens: answer.usage.outputTokens } });
  events.push({ type: 'message_stop', 'amazon-bedrock-invocationMetrics': { inputTokenCount: answer.usage.inputTokens, outputTokenCount: answer.usage.outputTokens } });
  return events.map((event) => ({ messageType: 'event', type: 'chunk', body: { bytes: Buffer.from(JSON.stringify(event)).toString('base64') } }));
}
