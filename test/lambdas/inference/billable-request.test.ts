import { billableChatRequest, PRICED_FIELDS, upstreamBody } from '../../../lambdas/inference/billable-request';
import { parseChatRequest } from '../../../lambdas/inference/chat-request';
import type { CreateChatCompletionBody } from '../../../lambdas/openapi/validators/inference.generated';
import { providerEndpoint } from '../../support/catalog-fixtures';

const chat = (body: Record<string, unknown>) => parseChatRequest({ model: 'acme/model', messages: [{ role: 'user', content: 'hi' }], ...body } as CreateChatCompletionBody);
const endpoint = providerEndpoint('acme', { context_length: 100_000, max_completion_tokens: 4096 });

describe('what of a chat request a provider may bill', () => {
  it('takes the larger token cap, with a reasoning budget on top, and every choice', () => {
    expect(billableChatRequest(chat({ max_tokens: 1, max_completion_tokens: 1_000_000 }), 50)).toMatchObject({ bodyBytes: 50, completionCap: 1_000_000, choices: 1 });
    expect(billableChatRequest(chat({ max_tokens: 100, reasoning: { max_tokens: 400 } }), 50).completionCap).toBe(500);
    expect(billableChatRequest(chat({ n: 128 }), 50)).toMatchObject({ completionCap: undefined, choices: 128 });
  });

  it('counts images apart from their bytes, and parts whose size the body does not show', () => {
    const messages = [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: [{ type: 'text', text: 'what is this' }, { type: 'image_url', image_url: { url: 'https://example.com/a.png' } }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] },
      { role: 'user', content: [{ type: 'file', file: { file_data: 'https://example.com/book.pdf' } }, { type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }, { type: 'video_url', video_url: { url: 'https://example.com/v.mp4' } }] },
    ];
    expect(billableChatRequest(chat({ messages }), 50)).toMatchObject({ images: 2, unsizedParts: 2 });
  });

  it('sends each token cap no higher than the endpoint generates, and the other fields as they came', () => {
    const sent = JSON.parse(upstreamBody(chat({ max_tokens: 1, max_completion_tokens: 1_000_000, temperature: 0.5 }), 'acme/model-v2', endpoint, false));
    expect(sent).toEqual({ model: 'acme/model-v2', messages: [{ role: 'user', content: 'hi' }], max_tokens: 1, max_completion_tokens: 4096, temperature: 0.5 });
    expect(JSON.parse(upstreamBody(chat({ stream: true }), 'acme/model', endpoint, false)).stream_options).toEqual({ include_usage: true });
  });

  it('forwards under a spending limit only the fields it can price: no web search, priority tier, fallback models or unknown fields', () => {
    const hostile = {
      plugins: [{ id: 'web', max_results: 100 }],
      web_search_options: { search_context_size: 'high' },
      service_tier: 'priority',
      prediction: { type: 'content', content: 'x'.repeat(10) },
      models: ['acme/dear'],
      route: 'fallback',
      x_new_billable_feature: true,
      tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
    };
    const limited = JSON.parse(upstreamBody(chat(hostile), 'acme/model', endpoint, true));
    expect(Object.keys(limited).sort()).toEqual(['messages', 'model', 'tools']);
    expect(Object.keys(limited).every((name) => PRICED_FIELDS.has(name))).toBe(true);
    const open = JSON.parse(upstreamBody(chat(hostile), 'acme/model', endpoint, false));
    expect(Object.keys(open)).toEqual(expect.arrayContaining(Object.keys(hostile).filter((name) => name !== 'models' && name !== 'route')));
  });

  it('never sends the routing fields, which the gateway routes by: `models`, `route`, `provider`', () => {
    const routed = { models: ['acme/other'], route: 'fallback', provider: { order: ['acme'], allow_fallbacks: false } };
    for (const limited of [true, false]) {
      const sent = JSON.parse(upstreamBody(chat(routed), 'acme/model', endpoint, limited));
      expect(Object.keys(sent).sort()).toEqual(['messages', 'model']);
    }
  });
});
