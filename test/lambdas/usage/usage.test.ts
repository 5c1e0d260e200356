import { periodStarts, requestCost } from '../../../lambdas/usage/usage';
import { providerEndpoint } from '../../support/catalog-fixtures';

describe('usage accounting', () => {
  it('prices a request with docs/reference.md#pricing-and-cost at its instant: overrides, discount and the per-request price', () => {
    const endpoint = providerEndpoint('acme', {
      pricing: {
        prompt: '0.000003',
        completion: '0.000015',
        request: '0.001',
        discount: 0.5,
        overrides: [
          { min_prompt_tokens: 1000, prompt: '0.000006' },
          { utc_start: 100, utc_end: 400, completion: '0.00001' },
        ],
      },
    });
    const noon = new Date('2026-11-18T12:00:00Z');
    const night = new Date('2026-11-18T02:00:00Z');
    // 0.5 × (10 × 0.000003 + 20 × 0.000015 + 0.001)
    expect(requestCost(endpoint, 10, 20, noon)).toBe('0.000665');
    // Long prompt: the prompt override; at night: the completion override too.
    expect(requestCost(endpoint, 2000, 20, noon)).toBe('0.00665');
    expect(requestCost(endpoint, 2000, 20, night)).toBe('0.0066');
  });

  it('counts a router\'s variable price as zero rather than a negative cost', () => {
    expect(requestCost(providerEndpoint('router', { pricing: { prompt: '-1', completion: '-1' } }), 100, 100, new Date())).toBe('0');
  });

  it('starts the week on Monday and the month on the 1st, in UTC', () => {
    expect(periodStarts(new Date('2026-11-22T23:59:59Z'))).toEqual({ day: '2026-11-22', week: '2026-11-16', month: '2026-11-01' });
    expect(periodStarts(new Date('2026-11-16T00:00:00Z'))).toEqual({ day: '2026-11-16', week: '2026-11-16', month: '2026-11-01' });
    expect(periodStarts(new Date('2026-03-01T08:00:00Z'))).toEqual({ day: '2026-03-01', week: '2026-02-23', month: '2026-03-01' });
  });
});
