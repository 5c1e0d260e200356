import { KEYS_PAGE } from '../../../lambdas/accounts/types';
import { KEYS_PAGE as PAGE_THE_PAGE_READS, allPages } from '../../../web/settings/key-pages';

/** The settings page reads a key list whole, page after page, as the service pages it (lambdas/management/operations/keys.ts). */
describe('the settings page reading a key list', () => {
  it('reads the page size the service answers', () => {
    expect(PAGE_THE_PAGE_READS).toBe(KEYS_PAGE);
  });

  it.each([0, 1, KEYS_PAGE - 1, KEYS_PAGE, 2 * KEYS_PAGE + 7])('reads a list of %i keys whole, asking once more than its full pages', async (count) => {
    const asked: number[] = [];
    const keys = await allPages(async (offset) => {
      asked.push(offset);
      return Array.from({ length: Math.max(0, Math.min(KEYS_PAGE, count - offset)) }, (_, i) => offset + i);
    });
    expect(keys).toEqual(Array.from({ length: count }, (_, i) => i));
    expect(asked).toEqual(Array.from({ length: Math.floor(count / KEYS_PAGE) + 1 }, (_, i) => i * KEYS_PAGE));
  });
});
