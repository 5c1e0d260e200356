import type { InferenceUpstreamName } from '../config';
import type { ProviderEndpoint } from '../catalog/types';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool' | 'developer';
  content: string;
}

export interface CompletionRequest {
  model: string;
  endpoint: ProviderEndpoint;
  messages: ChatMessage[];
  maxTokens: number | null;
}

export interface CompletionResult {
  content: string;
  finishReason: 'stop' | 'length';
  promptTokens: number;
  completionTokens: number;
}

/** Where a completion is produced: a provider in production, the echo provider locally. */
export interface InferenceUpstream {
  complete(request: CompletionRequest): Promise<CompletionResult>;
}

/**
 * A deterministic provider for the local runtime and tests: it answers with the last user
 * message, counting whitespace-separated words as tokens.
 */
export const echoUpstream: InferenceUpstream = {
  async complete({ messages, maxTokens }) {
    const lastUser = [...messages].reverse().find((m) => m.role === 'user')?.content ?? '';
    const words = lastUser.split(/\s+/).filter(Boolean);
    const kept = maxTokens !== null ? words.slice(0, maxTokens) : words;
    const promptTokens = messages.reduce((sum, m) => sum + m.content.split(/\s+/).filter(Boolean).length, 0);
    return {
      content: kept.join(' '),
      finishReason: kept.length < words.length ? 'length' : 'stop',
      promptTokens,
      completionTokens: kept.length,
    };
  },
};

/** The upstream a deployment configured (`INFERENCE_UPSTREAM`); `none` answers 503. */
export function upstreamNamed(name: InferenceUpstreamName): InferenceUpstream | null {
  return name === 'echo' ? echoUpstream : null;
}
