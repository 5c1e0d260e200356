import { effectivePricing } from '../../../lambdas/catalog/pricing';
import type { PricingOverride, PublicPricing } from '../../../lambdas/catalog/types';

// 2026-06-01 is a Monday; 2026-05-31 a Sunday.
const MONDAY_NOON = new Date('2026-06-01T12:00:00Z');

const base: PublicPricing = { prompt: '0.000001', completion: '0.000002' };

function withOverrides(...overrides: PricingOverride[]): PublicPricing {
  return { ...base, overrides };
}

function promptAt(pricing: PublicPricing, at: string, promptTokens = 1000): string {
  return effectivePricing(pricing, { promptTokens, at: new Date(at) }).prompt;
}

describe('effectivePricing (docs/reference.md#pricing-and-cost)', () => {
  it('returns the base prices untouched when there are no overrides', () => {
    const pricing: PublicPricing = {
      prompt: '0.00000300',
      completion: '0.000015',
      input_cache_read: '0.0000003',
      web_search: '0.01',
    };

    const result = effectivePricing(pricing, { promptTokens: 10, at: MONDAY_NOON });

    expect(result).toEqual({
      prompt: '0.00000300',
      completion: '0.000015',
      input_cache_read: '0.0000003',
      web_search: '0.01',
    });
  });

  it('lists keys in PRICE_KEYS order and leaves out discount and overrides', () => {
    const pricing: PublicPricing = {
      web_search: '0.01',
      completion: '2',
      prompt: '1',
      discount: 0,
      overrides: [{ input_cache_read: '0.5' }],
    };

    const result = effectivePricing(pricing, { promptTokens: 0, at: MONDAY_NOON });

    expect(Object.keys(result)).toEqual(['prompt', 'completion', 'input_cache_read', 'web_search']);
  });

  describe('min_prompt_tokens applies only when prompt tokens are strictly greater', () => {
    const pricing = withOverrides({ min_prompt_tokens: 200000, prompt: '0.000002' });

    it.each([
      [0, '0.000001'],
      [199999, '0.000001'],
      [200000, '0.000001'],
      [200001, '0.000002'],
      [1000000, '0.000002'],
    ])('%d prompt tokens → prompt %s', (tokens, expected) => {
      expect(promptAt(pricing, '2026-06-01T12:00:00Z', tokens)).toBe(expected);
    });
  });

  describe('a daily window [utc_start, utc_end) includes its start and excludes its end', () => {
    const pricing = withOverrides({ utc_start: 100, utc_end: 400, prompt: '0.0000005' });

    it.each([
      ['2026-06-01T00:59:59.999Z', '0.000001'],
      ['2026-06-01T01:00:00Z', '0.0000005'],
      ['2026-06-01T02:30:00Z', '0.0000005'],
      ['2026-06-01T03:59:59.999Z', '0.0000005'],
      ['2026-06-01T04:00:00Z', '0.000001'],
    ])('at %s → prompt %s', (at, expected) => {
      expect(promptAt(pricing, at)).toBe(expected);
    });
  });

  describe('a window with minutes in its bounds (1030–1045)', () => {
    const pricing = withOverrides({ utc_start: 1030, utc_end: 1045, prompt: '0.0000005' });

    it.each([
      ['2026-06-01T10:29:59Z', '0.000001'],
      ['2026-06-01T10:30:00Z', '0.0000005'],
      ['2026-06-01T10:44:59Z', '0.0000005'],
      ['2026-06-01T10:45:00Z', '0.000001'],
    ])('at %s → prompt %s', (at, expected) => {
      expect(promptAt(pricing, at)).toBe(expected);
    });
  });

  describe('a window with utc_start > utc_end wraps past midnight (2300–0100)', () => {
    const pricing = withOverrides({ utc_start: 2300, utc_end: 100, prompt: '0.0000005' });

    it.each([
      ['2026-06-01T22:59:59Z', '0.000001'],
      ['2026-06-01T23:00:00Z', '0.0000005'],
      ['2026-06-01T23:59:00Z', '0.0000005'],
      ['2026-06-02T00:00:00Z', '0.0000005'],
      ['2026-06-02T00:59:00Z', '0.0000005'],
      ['2026-06-02T01:00:00Z', '0.000001'],
      ['2026-06-01T12:00:00Z', '0.000001'],
    ])('at %s → prompt %s', (at, expected) => {
      expect(promptAt(pricing, at)).toBe(expected);
    });
  });

  describe('edge-shaped windows', () => {
    it.each([
      ['utc_start equal to utc_end is an empty window', { utc_start: 600, utc_end: 600 }, '2026-06-01T06:00:00Z', false],
      ['0000–2400 is the whole day (start)', { utc_start: 0, utc_end: 2400 }, '2026-06-01T00:00:00Z', true],
      ['0000–2400 is the whole day (end)', { utc_start: 0, utc_end: 2400 }, '2026-06-01T23:59:59Z', true],
      ['only utc_end: the window starts at 0000', { utc_end: 400 }, '2026-06-01T00:00:00Z', true],
      ['only utc_end: the end stays exclusive', { utc_end: 400 }, '2026-06-01T04:00:00Z', false],
      ['only utc_start: the window ends at 2400', { utc_start: 2200 }, '2026-06-01T23:59:59Z', true],
      ['only utc_start: before the start', { utc_start: 2200 }, '2026-06-01T21:59:00Z', false],
    ] as const)('%s', (_name, window, at, applies) => {
      const pricing = withOverrides({ ...window, prompt: '0.0000005' });

      expect(promptAt(pricing, at)).toBe(applies ? '0.0000005' : '0.000001');
    });
  });

  describe('utc_days scopes the whole UTC day when no window is set', () => {
    const pricing = withOverrides({ utc_days: ['sunday'], prompt: '0.0000005' });

    it.each([
      ['Saturday 23:59:59', '2026-05-30T23:59:59Z', '0.000001'],
      ['Sunday 00:00', '2026-05-31T00:00:00Z', '0.0000005'],
      ['Sunday 23:59:59', '2026-05-31T23:59:59Z', '0.0000005'],
      ['Sunday 23:59:59.999', '2026-05-31T23:59:59.999Z', '0.0000005'],
      ['Monday 00:00', '2026-06-01T00:00:00Z', '0.000001'],
    ])('%s → prompt %s', (_name, at, expected) => {
      expect(promptAt(pricing, at)).toBe(expected);
    });
  });

  describe('utc_days scopes a window by the weekday of the request instant itself', () => {
    const pricing = withOverrides({ utc_days: ['sunday'], utc_start: 2300, utc_end: 100, prompt: '0.0000005' });

    it.each([
      ['Sunday 00:30 (after Saturday night, but it is Sunday)', '2026-05-31T00:30:00Z', '0.0000005'],
      ['Sunday 12:00 (outside the window)', '2026-05-31T12:00:00Z', '0.000001'],
      ['Sunday 23:00', '2026-05-31T23:00:00Z', '0.0000005'],
      ['Sunday 23:59:59', '2026-05-31T23:59:59Z', '0.0000005'],
      ['Monday 00:00 (inside the window, but Monday)', '2026-06-01T00:00:00Z', '0.000001'],
      ['Saturday 23:30 (inside the window, but Saturday)', '2026-05-30T23:30:00Z', '0.000001'],
    ])('%s → prompt %s', (_name, at, expected) => {
      expect(promptAt(pricing, at)).toBe(expected);
    });
  });

  it('applies an entry only when all its conditions hold', () => {
    const pricing = withOverrides({
      min_prompt_tokens: 1000,
      utc_days: ['monday'],
      utc_start: 900,
      utc_end: 1700,
      prompt: '0.0000005',
    });

    expect(promptAt(pricing, '2026-06-01T12:00:00Z', 1001)).toBe('0.0000005');
    expect(promptAt(pricing, '2026-06-01T12:00:00Z', 1000)).toBe('0.000001');
    expect(promptAt(pricing, '2026-06-01T18:00:00Z', 1001)).toBe('0.000001');
    expect(promptAt(pricing, '2026-06-02T12:00:00Z', 1001)).toBe('0.000001');
  });

  it('lets later applicable entries win per key while absent keys inherit', () => {
    const pricing: PublicPricing = {
      prompt: '1',
      completion: '2',
      input_cache_read: '0.1',
      overrides: [
        { min_prompt_tokens: 100, prompt: '10', completion: '20' },
        { min_prompt_tokens: 200, prompt: '100' },
        { min_prompt_tokens: 300, prompt: '1000', completion: '2000' },
        { utc_days: ['monday'], audio: '5' },
      ],
    };

    const result = effectivePricing(pricing, { promptTokens: 250, at: MONDAY_NOON });

    expect(result).toEqual({ prompt: '100', completion: '20', audio: '5', input_cache_read: '0.1' });
  });

  it('adds keys named only by an applicable override and not by one that does not apply', () => {
    const pricing = withOverrides({ utc_days: ['sunday'], input_cache_write: '0.3' }, { utc_days: ['monday'], audio: '0.2' });

    const result = effectivePricing(pricing, { promptTokens: 0, at: MONDAY_NOON });

    expect(result).toEqual({ prompt: '0.000001', completion: '0.000002', audio: '0.2' });
  });

  it('ignores a non-overridable key carried by an override', () => {
    const pricing = withOverrides({ request: '1' } as PricingOverride);

    expect(effectivePricing(pricing, { promptTokens: 0, at: MONDAY_NOON })).toEqual(base);
  });

  describe('an override with malformed conditions never applies', () => {
    it.each([
      ['minutes ≥ 60', { utc_start: 160 }],
      ['above 2400', { utc_end: 2500 }],
      ['negative', { utc_start: -100 }],
      ['not an integer', { utc_start: 100.5 }],
      ['empty utc_days', { utc_days: [] }],
      ['unknown weekday', { utc_days: ['funday'] }],
      ['NaN min_prompt_tokens', { min_prompt_tokens: Number.NaN }],
    ])('%s', (_name, condition) => {
      const pricing = withOverrides({ ...(condition as PricingOverride), prompt: '0.0000005' });

      expect(promptAt(pricing, '2026-06-01T12:00:00Z')).toBe('0.000001');
    });
  });

  describe('discount multiplies every price by (1 − discount) in exact decimal', () => {
    it.each([
      [0, { prompt: '0.0000003', completion: '0.00000150', web_search: '0.01' }],
      [0.1, { prompt: '0.00000027', completion: '0.00000135', web_search: '0.009' }],
      [0.35, { prompt: '0.000000195', completion: '0.000000975', web_search: '0.0065' }],
      [0.5, { prompt: '0.00000015', completion: '0.00000075', web_search: '0.005' }],
      [1, { prompt: '0', completion: '0', web_search: '0' }],
    ])('discount %d', (discount, expected) => {
      const pricing: PublicPricing = { prompt: '0.0000003', completion: '0.00000150', web_search: '0.01', discount };

      expect(effectivePricing(pricing, { promptTokens: 0, at: MONDAY_NOON })).toEqual(expected);
    });

    it('discounts the overriding price, not the base one', () => {
      const pricing: PublicPricing = {
        prompt: '0.000003',
        completion: '0.000015',
        discount: 0.2,
        overrides: [{ min_prompt_tokens: 10, prompt: '0.000006' }],
      };

      expect(effectivePricing(pricing, { promptTokens: 11, at: MONDAY_NOON })).toEqual({
        prompt: '0.0000048',
        completion: '0.000012',
      });
    });

    it('handles a discount that prints in exponent notation', () => {
      const pricing: PublicPricing = { prompt: '1', completion: '0', discount: 1e-7 };

      expect(effectivePricing(pricing, { promptTokens: 0, at: MONDAY_NOON })).toEqual({
        prompt: '0.9999999',
        completion: '0',
      });
    });

    it('leaves the router variable price "-1" as it is', () => {
      const pricing: PublicPricing = { prompt: '-1', completion: '-1', discount: 0.5 };

      expect(effectivePricing(pricing, { promptTokens: 0, at: MONDAY_NOON })).toEqual({ prompt: '-1', completion: '-1' });
    });

    it('throws a RangeError for a discount outside [0, 1]', () => {
      expect(() => effectivePricing({ ...base, discount: 1.5 }, { promptTokens: 0, at: MONDAY_NOON })).toThrow(
        new RangeError('pricing.discount 1.5 is outside [0, 1]'),
      );
    });
  });
});
