import { IMAGE_TOKENS_MAX, maximumCost, type BillableRequest } from '../../../lambdas/spending/estimate';
import { requestCost } from '../../../lambdas/usage/usage';
import { providerEndpoint } from '../../support/catalog-fixtures';

const at = new Date('2026-11-27T12:00:00Z');

/** A request of `bodyBytes` bytes and no other billable part. */
const request = (fields: Partial<BillableRequest> = {}): BillableRequest => ({ bodyBytes: 10, completionCap: undefined, choices: 1, images: 0, unsizedParts: 0, ...fields });
const bound = (billable: BillableRequest, endpoints = [cheap]) => {
  const estimate = maximumCost(billable, endpoints, at);
  if (!estimate.bounded) throw new Error(estimate.reason);
  return estimate.cost;
};
const cheap = providerEndpoint('cheap', { pricing: { prompt: '0.000001', completion: '0.000002' }, context_length: 1000, max_completion_tokens: 100 });
const dear = providerEndpoint('dear', { pricing: { prompt: '0.000003', completion: '0.00001', request: '0.001' }, context_length: 1000, max_completion_tokens: 200 });

describe('the most a completion can cost', () => {
  it('covers every prompt of that many bytes and every completion allowed, on the dearest endpoint it may fall back to', () => {
    const estimate = bound(request({ bodyBytes: 400, completionCap: 50 }), [cheap, dear]);
    expect(estimate).toBe(requestCost(dear, 400, 50, at));
    for (const [prompt, completion] of [[400, 50], [1, 1], [399, 0]] as const) {
      expect(Number(requestCost(dear, prompt, completion, at))).toBeLessThanOrEqual(Number(estimate));
      expect(Number(requestCost(cheap, prompt, completion, at))).toBeLessThanOrEqual(Number(estimate));
    }
  });

  it('takes the completion cap within the endpoint maximum, else that maximum, and the prompt within the context', () => {
    expect(bound(request({ completionCap: 20 }))).toBe(requestCost(cheap, 10, 20, at));
    expect(bound(request())).toBe(requestCost(cheap, 10, 100, at));
    expect(bound(request({ completionCap: 1_000_000 }))).toBe(requestCost(cheap, 10, 100, at));
    expect(bound(request({ bodyBytes: 50_000 }))).toBe(requestCost(cheap, 1000, 100, at));
  });

  it('counts every choice of n, each image at its tokens and price, and the whole context for a part of unknown size', () => {
    expect(bound(request({ completionCap: 100, choices: 128 }))).toBe(String(128 * Number(requestCost(cheap, 10, 100, at))));
    const pictured = providerEndpoint('pictured', { pricing: { prompt: '0.000001', completion: '0.000002', image: '0.005' }, context_length: 100_000, max_completion_tokens: 100 });
    expect(Number(bound(request({ images: 2 }), [pictured]))).toBeCloseTo(Number(requestCost(pictured, 10 + 2 * IMAGE_TOKENS_MAX, 100, at)) + 2 * 0.005, 12);
    expect(bound(request({ unsizedParts: 1 }), [pictured])).toBe(requestCost(pictured, 100_000, 100, at));
  });

  it('prices every token at the dearest price its kind may have: cache writes, reasoning, audio and image output', () => {
    const cached = providerEndpoint('cached', {
      pricing: { prompt: '0.000001', completion: '0.000002', input_cache_write: '0.00000125', internal_reasoning: '0.000004' },
      context_length: 1000,
      max_completion_tokens: 100,
    });
    expect(Number(bound(request({ bodyBytes: 800 }), [cached]))).toBeCloseTo(800 * 0.00000125 + 100 * 0.000004, 12);
  });

  it('takes the dearest tier a smaller prompt may meet, and the tier the whole prompt meets', () => {
    // A tier that makes long prompts cheaper: a prompt just under it costs more per token.
    const tiered = providerEndpoint('tiered', {
      pricing: { prompt: '0.00001', completion: '0.00001', overrides: [{ min_prompt_tokens: 500, prompt: '0.000001', completion: '0.000001' }] },
      context_length: 10_000,
      max_completion_tokens: 100,
    });
    expect(Number(bound(request({ bodyBytes: 600 }), [tiered]))).toBeCloseTo(600 * 0.00001 + 100 * 0.00001, 12);
    expect(Number(requestCost(tiered, 500, 100, at))).toBeLessThanOrEqual(Number(bound(request({ bodyBytes: 600 }), [tiered])));
  });

  it('is no bound at all for a variable price, and says whose', () => {
    const router = providerEndpoint('router', { provider_name: 'Auto Router', pricing: { prompt: '-1', completion: '-1' } });
    expect(maximumCost(request(), [cheap, router], at)).toEqual({ bounded: false, reason: "Auto Router's prompt price for this model is variable" });
  });
});
