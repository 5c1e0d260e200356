import { errorChunk, publicChunk, publicCompletion, type AnswerFacts } from '../../../lambdas/inference/public-answer';

const FACTS: AnswerFacts = { id: 'gen-1', created: 1_795_003_200, model: 'acme/chat', provider: 'Acme' };

describe('a provider answer in the public response shapes', () => {
  it('fills every required member of ChatResult the provider left out, from the schema and the facts', () => {
    expect(publicCompletion({ choices: [{ message: { content: 'hi' } }, { message: {} }] }, FACTS)).toEqual({
      id: 'gen-1',
      object: 'chat.completion',
      created: 1_795_003_200,
      model: 'acme/chat',
      provider: 'Acme',
      system_fingerprint: null,
      choices: [
        { index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: null },
        { index: 1, message: { role: 'assistant' }, finish_reason: null },
      ],
    });
  });

  it("keeps the provider's values and members, and always names the generation id, the routed model and provider", () => {
    const sent = {
      id: 'chatcmpl-9',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'Acme-Chat-v2',
      system_fingerprint: 'fp_1',
      service_tier: null,
      choices: [{ index: 0, message: { role: 'assistant', content: 'hi', annotations: [] }, finish_reason: 'stop', logprobs: null }],
      usage: { prompt_tokens: 2, completion_tokens: 1, total_tokens: 3, cost_in_credits: 1 },
      x_trace: 'abc',
    };
    expect(publicCompletion(sent, FACTS)).toEqual({ ...sent, id: 'gen-1', model: 'acme/chat', provider: 'Acme' });
  });

  it('replaces a required member of the wrong type and leaves out an optional one', () => {
    const answer = publicCompletion({ id: 7, created: '2026-11-18', choices: [{ index: 'a', message: { role: 'assistant' }, finish_reason: 'stop' }], usage: null }, FACTS);
    expect(answer).toMatchObject({ id: 'gen-1', created: 1_795_003_200, choices: [{ index: 0, message: { role: 'assistant' }, finish_reason: 'stop' }] });
    expect(answer).not.toHaveProperty('usage');
  });

  it('completes partial usage: missing counts are 0 and the total their sum', () => {
    expect(publicCompletion({ choices: [], usage: { prompt_tokens: 4, completion_tokens: 2 } }, FACTS).usage).toEqual({ prompt_tokens: 4, completion_tokens: 2, total_tokens: 6 });
  });

  it('leaves out a choice that is not an object', () => {
    expect(publicCompletion({ choices: ['hi', { message: { content: 'x' } }] }, FACTS).choices).toEqual([{ index: 1, message: { role: 'assistant', content: 'x' }, finish_reason: null }]);
  });

  it('drops the nulls ChatStreamChunk does not allow (usage, system_fingerprint) and fills delta and finish_reason', () => {
    expect(publicChunk({ id: 'c1', choices: [{ index: 0 }], usage: null, system_fingerprint: null }, FACTS)).toEqual({
      id: 'gen-1',
      object: 'chat.completion.chunk',
      created: 1_795_003_200,
      model: 'acme/chat',
      provider: 'Acme',
      choices: [{ index: 0, delta: {}, finish_reason: null }],
    });
  });

  it("makes a provider's error event a chunk with a numeric code, keeping its other members", () => {
    expect(publicChunk({ error: { message: 'overloaded', code: 'server_error', type: 'server_error', metadata: { raw: 1 } } }, FACTS)).toEqual({
      id: 'gen-1',
      object: 'chat.completion.chunk',
      created: 1_795_003_200,
      model: 'acme/chat',
      provider: 'Acme',
      choices: [],
      error: { code: 502, message: 'overloaded', type: 'server_error' },
    });
  });

  it("makes the gateway's own failure a last chunk", () => {
    expect(errorChunk({ code: 504, message: 'Provider Acme stopped answering' }, FACTS)).toEqual({
      id: 'gen-1',
      object: 'chat.completion.chunk',
      created: 1_795_003_200,
      model: 'acme/chat',
      provider: 'Acme',
      choices: [],
      error: { code: 504, message: 'Provider Acme stopped answering' },
    });
  });
});
