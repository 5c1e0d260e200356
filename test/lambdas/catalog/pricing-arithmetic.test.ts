import { averageTokenPrice } from '../../../lambdas/catalog/pricing';
import { multiplyDecimal } from '../../../lambdas/decimal';

describe('multiplyDecimal', () => {
  it.each([
    ['0.0000003', '0.9', '0.00000027'],
    ['0.0000003', '1', '0.0000003'],
    ['0.00000150', '1', '0.0000015'],
    ['12.5', '0.8', '10'],
    ['0', '1.6', '0'],
    ['0.000', '1.6', '0'],
    ['-1', '0.5', '-0.5'],
    ['0.00000008333333333333334', '1.2', '0.000000100000000000000008'],
  ])('%s × %s = %s', (a, b, expected) => {
    expect(multiplyDecimal(a, b)).toBe(expected);
  });

  it('rejects exponent notation', () => {
    expect(() => multiplyDecimal('1e-7', '1')).toThrow(new RangeError('"1e-7" is not a decimal number'));
  });
});

describe('averageTokenPrice', () => {
  it.each([
    ['plain prices', { prompt: '0.000003', completion: '0.000015' }, 0.000009],
    ['free', { prompt: '0', completion: '0' }, 0],
    ['discount applied', { prompt: '0.000002', completion: '0.000004', discount: 0.5 }, 0.0000015],
    ['router "-1" is unknown', { prompt: '-1', completion: '-1' }, null],
    ['one negative price is unknown', { prompt: '0.000001', completion: '-1' }, null],
    ['malformed is unknown', { prompt: 'abc', completion: '0.000001' }, null],
  ] as const)('%s', (_name, pricing, expected) => {
    expect(averageTokenPrice(pricing)).toBe(expected);
  });
});
