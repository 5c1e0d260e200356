import { validatePricing } from '../../../lambdas/catalog/pricing';
import type { PublicPricing } from '../../../lambdas/catalog/types';

describe('validatePricing', () => {
  it('accepts well-formed pricing with every kind of condition', () => {
    const pricing: PublicPricing = {
      prompt: '0.000003',
      completion: '0.000015',
      input_cache_write_1h: '0.000006',
      discount: 0.25,
      overrides: [
        { min_prompt_tokens: 200000, prompt: '0.000006' },
        { utc_start: 2300, utc_end: 100, utc_days: ['saturday', 'sunday'], completion: '0.00001' },
        { utc_start: 0, utc_end: 2400 },
      ],
    };

    expect(validatePricing(pricing)).toEqual([]);
  });

  it('accepts the router variable price "-1"', () => {
    expect(validatePricing({ prompt: '-1', completion: '-1' })).toEqual([]);
  });

  it.each([
    [
      'missing prompt',
      { completion: '0.1' },
      ['pricing.prompt: is required'],
    ],
    [
      'exponent notation',
      { prompt: '1e-7', completion: '0.1' },
      ['pricing.prompt: "1e-7" is not a decimal number'],
    ],
    [
      'a number instead of a string',
      { prompt: '0.1', completion: 0.1 },
      ['pricing.completion: 0.1 must be a decimal string'],
    ],
    [
      'negative price other than "-1"',
      { prompt: '-0.5', completion: '0.1' },
      ['pricing.prompt: "-0.5" is negative (only "-1", a variable price, may be)'],
    ],
    [
      'malformed optional price',
      { prompt: '0.1', completion: '0.1', web_search: '$0.01' },
      ['pricing.web_search: "$0.01" is not a decimal number'],
    ],
    [
      'discount above 1',
      { prompt: '0.1', completion: '0.1', discount: 1.5 },
      ['pricing.discount: 1.5 must be a number between 0 and 1'],
    ],
    [
      'negative discount',
      { prompt: '0.1', completion: '0.1', discount: -0.1 },
      ['pricing.discount: -0.1 must be a number between 0 and 1'],
    ],
    [
      'overrides not an array',
      { prompt: '0.1', completion: '0.1', overrides: {} },
      ['pricing.overrides: must be an array'],
    ],
    [
      'invalid HHMM values',
      { prompt: '0.1', completion: '0.1', overrides: [{ utc_start: 160, utc_end: 2500 }, { utc_start: -100, utc_end: 99.5 }] },
      [
        'pricing.overrides[0].utc_start: 160 is not an HHMM clock time (0 to 2400, minutes below 60)',
        'pricing.overrides[0].utc_end: 2500 is not an HHMM clock time (0 to 2400, minutes below 60)',
        'pricing.overrides[1].utc_start: -100 is not an HHMM clock time (0 to 2400, minutes below 60)',
        'pricing.overrides[1].utc_end: 99.5 is not an HHMM clock time (0 to 2400, minutes below 60)',
      ],
    ],
    [
      'empty window',
      { prompt: '0.1', completion: '0.1', overrides: [{ utc_start: 600, utc_end: 600 }] },
      ['pricing.overrides[0]: utc_start equals utc_end, an empty window that never applies'],
    ],
    [
      'unknown weekday',
      { prompt: '0.1', completion: '0.1', overrides: [{ utc_days: ['monday', 'Tuesday'] }] },
      [
        'pricing.overrides[0].utc_days: "Tuesday" is not a weekday (sunday, monday, tuesday, wednesday, thursday, friday, saturday)',
      ],
    ],
    [
      'empty utc_days',
      { prompt: '0.1', completion: '0.1', overrides: [{ utc_days: [] }] },
      ['pricing.overrides[0].utc_days: must name at least one weekday'],
    ],
    [
      'bad override price and non-overridable key',
      { prompt: '0.1', completion: '0.1', overrides: [{ prompt: 'free', request: '1' }] },
      [
        'pricing.overrides[0].request: is not a price an override may replace',
        'pricing.overrides[0].prompt: "free" is not a decimal number',
      ],
    ],
    [
      'negative min_prompt_tokens',
      { prompt: '0.1', completion: '0.1', overrides: [{ min_prompt_tokens: -1 }] },
      ['pricing.overrides[0].min_prompt_tokens: -1 must be a number ≥ 0'],
    ],
  ])('reports %s', (_name, pricing, expected) => {
    expect(validatePricing(pricing as unknown as PublicPricing)).toEqual(expected);
  });
});
