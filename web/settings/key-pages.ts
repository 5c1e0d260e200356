/** The most keys one `GET /keys` answers: the service's page (lambdas/accounts/types.ts), which test/web/settings/key-pages.test.ts holds this to. */
export const KEYS_PAGE = 1000;

/**
 * Every key of a list, page after page, from `page(offset)`: an answer shorter than a page is
 * the last, so a list of fewer keys than a page costs one request.
 */
export async function allPages<T>(page: (offset: number) => Promise<T[]>): Promise<T[]> {
  const all: T[] = [];
  for (;;) {
    const next = await page(all.length);
    all.push(...next);
    if (next.length < KEYS_PAGE) return all;
  }
}
