import { DomainError } from '../../../lambdas/errors';
import { validated, type RequestValidator } from '../../../lambdas/openapi/request-validation';
import { createChatCompletionBody } from '../../../lambdas/openapi/validators/inference.generated';

const MAX = Number.MAX_SAFE_INTEGER;
const EPSILON = 1e-9;

/** The refusal of a chat request with `extra`, as `Invalid <parameter>: <reason>` and the parameter; `accepted` when valid. */
function refusal(extra: Record<string, unknown>): { message: string; parameter?: string } | 'accepted' {
  try {
    validated(createChatCompletionBody as RequestValidator<unknown>, { model: 'm', messages: [{ role: 'user', content: 'x' }], ...extra });
    return 'accepted';
  } catch (error) {
    if (!(error instanceof DomainError) || error.kind !== 'invalid_input') throw error;
    return { message: error.message, parameter: (error.metadata as { parameter?: string }).parameter };
  }
}

/** [parameter, the values just inside its range, the values just outside, the reason given for those]. */
const RANGES: [string, unknown[], unknown[], string][] = [
  ['temperature', [0, 2, 0.7], [-EPSILON, 2 + EPSILON, 1e308, -1e308], 'must be a number from 0 to 2'],
  ['top_p', [0, 1], [-EPSILON, 1 + EPSILON], 'must be a number from 0 to 1'],
  ['min_p', [0, 1], [-EPSILON, 1 + EPSILON], 'must be a number from 0 to 1'],
  ['top_a', [0, 1], [-EPSILON, 1 + EPSILON], 'must be a number from 0 to 1'],
  ['frequency_penalty', [-2, 2], [-2 - EPSILON, 2 + EPSILON], 'must be a number from -2 to 2'],
  ['presence_penalty', [-2, 2], [-2 - EPSILON, 2 + EPSILON], 'must be a number from -2 to 2'],
  ['repetition_penalty', [EPSILON, 1, 2], [0, -1, 2 + EPSILON], 'must be a number greater than 0 and at most 2'],
  ['top_k', [0, MAX], [-1, MAX + 1, 1.5, 1e308], `must be an integer from 0 to ${MAX}`],
  ['seed', [-MAX, 0, MAX], [-MAX - 1, MAX + 1, 0.5], `must be an integer from -${MAX} to ${MAX}`],
  ['max_tokens', [1, MAX], [0, MAX + 1, 1e308, 1.5], `must be an integer from 1 to ${MAX}`],
  ['max_completion_tokens', [1, MAX], [0, MAX + 1, 1e308], `must be an integer from 1 to ${MAX}`],
  ['n', [1, 128], [0, 129, 1000], 'must be an integer from 1 to 128'],
  ['top_logprobs', [0, 20], [-1, 21], 'must be an integer from 0 to 20'],
];

/**
 * The chat request's parameters within the ranges the public document and OpenAI's API give
 * them: each bound and the value just inside it pass, the value just outside is a 400 naming
 * the parameter, in the words of every other request validation error.
 */
describe('chat completion parameter ranges', () => {
  describe.each(RANGES)('%s', (parameter, inside, outside, reason) => {
    it.each(inside)('accepts %p', (value) => {
      expect(refusal({ [parameter]: value })).toBe('accepted');
    });
    it.each(outside)('refuses %p, naming the parameter', (value) => {
      expect(refusal({ [parameter]: value })).toEqual({ message: `Invalid ${parameter}: ${reason}`, parameter });
    });
    it('takes null for not set', () => {
      expect(refusal({ [parameter]: null })).toBe('accepted');
    });
  });

  it('takes an assistant turn with tool calls and no content member, as the public schema does, and refuses any other role without content', () => {
    const call = { id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } };
    const withoutContent = [{ role: 'user', content: 'x' }, { role: 'assistant', tool_calls: [call] }, { role: 'tool', tool_call_id: 'c1', content: 'y' }];
    expect(refusal({ messages: withoutContent })).toBe('accepted');
    expect(refusal({ messages: [{ role: 'user', content: 'x' }, { role: 'assistant', content: null, tool_calls: [call] }] })).toBe('accepted');
    for (const role of ['user', 'system', 'developer', 'tool']) expect(refusal({ messages: [{ role }] })).toMatchObject({ message: expect.stringContaining('content') });
  });

  it('takes logit_bias values from -100 to 100, and names the token whose bias is out of range', () => {
    expect(refusal({ logit_bias: { '50256': -100, '15': 100, '7': 0.5 } })).toBe('accepted');
    expect(refusal({ logit_bias: null })).toBe('accepted');
    expect(refusal({ logit_bias: { '50256': -100 - EPSILON } })).toEqual({ message: 'Invalid logit_bias: item 50256 must be a number from -100 to 100', parameter: 'logit_bias' });
    expect(refusal({ logit_bias: { '15': 101 } })).toEqual({ message: 'Invalid logit_bias: item 15 must be a number from -100 to 100', parameter: 'logit_bias' });
    expect(refusal({ logit_bias: { '15': '1' } })).toEqual({ message: 'Invalid logit_bias: item 15 must be a number from -100 to 100', parameter: 'logit_bias' });
    expect(refusal({ logit_bias: [1] })).toEqual({ message: 'Invalid logit_bias: must be an object', parameter: 'logit_bias' });
  });

  it('takes up to 4 stop sequences', () => {
    expect(refusal({ stop: '\n' })).toBe('accepted');
    expect(refusal({ stop: ['a', 'b', 'c', 'd'] })).toBe('accepted');
    expect(refusal({ stop: ['a', 'b', 'c', 'd', 'e'] })).toEqual({ message: 'Invalid stop: must have at most 4 items', parameter: 'stop' });
    expect(refusal({ stop: [1] })).toEqual({ message: 'Invalid stop: item 0 must be a string', parameter: 'stop' });
    expect(refusal({ stop: 4 })).toEqual({ message: 'Invalid stop: must be a string or an array', parameter: 'stop' });
  });

  it('keeps the JSON types: a number as text is refused, not read', () => {
    expect(refusal({ temperature: '0.5' })).toEqual({ message: 'Invalid temperature: must be a number from 0 to 2', parameter: 'temperature' });
    expect(refusal({ n: '2' })).toEqual({ message: 'Invalid n: must be an integer from 1 to 128', parameter: 'n' });
  });
});
