import type { ListWindow } from '../accounts/accounts-service';

/**
 * `offset` and `limit` of the management lists (workspaces, guardrails), with the public
 * document's bounds (listWorkspaces, listGuardrails): offset at least 0, limit 1 to 100, 50
 * when only offset is given. As in the catalog (docs/reference.md#listing-rules rule 1), neither means the whole list.
 *
 * Serving pages matters to the official SDK: its paginator asks for `offset + page length`
 * while a page holds `limit` items, so a server ignoring `offset` makes it loop for ever.
 */
export const LIST_PAGE = Object.freeze({ maxLimit: 100, defaultLimit: 50 });

/** The `offset` and `limit` query parameters of a list of `items`, as its route declares them. */
export function listPageParameters(items: string) {
  return [
    {
      name: 'offset',
      // Integer or null, as in the public document; `null` means not given (an empty value is refused).
      schema: { type: ['integer', 'null'], minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
      description: `The ${items} to skip, at least 0. With neither offset nor limit the whole list comes back.`,
    },
    {
      name: 'limit',
      schema: { type: 'integer', minimum: 1, maximum: LIST_PAGE.maxLimit },
      description: `Page size, 1 to ${LIST_PAGE.maxLimit}; ${LIST_PAGE.defaultLimit} when only offset is given.`,
    },
  ] as const;
}

/** The page's items of `all`, and the count of them all (`total_count`). */
export function pageOf<T>(all: readonly T[], query: ListQuery): { items: readonly T[]; total: number } {
  const window = windowOf(query);
  return { items: window ? all.slice(window.offset, window.offset + window.limit) : all, total: all.length };
}

/** The page's window of a list (undefined for the whole list), for a service that reads only what it shows. */
export function windowOf({ offset, limit }: ListQuery): ListWindow | undefined {
  if (offset == null && limit === undefined) return undefined;
  return { offset: offset ?? 0, limit: limit ?? LIST_PAGE.defaultLimit };
}

/** The paging parameters of a management list, as validated. */
type ListQuery = { offset?: number | null; limit?: number };
