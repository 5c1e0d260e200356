import { countOf } from '../../lambdas/counts';

/** One reading of a reported count wherever one is read (the relay, the public answer, the generation record, the providers' usage). */
describe('countOf', () => {
  it.each<[unknown, number | undefined]>([
    [0, 0],
    [42, 42],
    [3.9, 3],
    [Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
    [Number.MAX_SAFE_INTEGER + 2, undefined],
    [-1, undefined],
    [-0.5, undefined],
    [Number.POSITIVE_INFINITY, undefined],
    [Number.NaN, undefined],
    ['12', undefined],
    [null, undefined],
    [undefined, undefined],
  ])('reads %p as %p', (value, count) => {
    expect(countOf(value)).toBe(count);
  });
});
