import { invalidParameter } from '../errors';

/**
 * `offset` and `limit` of the management lists (workspaces, guardrails), with the public
 * document's bounds (listWorkspaces, listGuardrails): offset at least 0, limit 1 to 100, 50
 * when only offset is given. As in the catalog (SPEC 4.1 rule 1), neither means the whole list.
 *
 * Serving pages matters to the official SDK: its paginator asks for `offset + page length`
 * while a page holds `limit` items, so a server ignoring `offset` makes it loop for ever.
 */
export const LIST_PAGE = Object.freeze({ maxLimit: 100, defaultLimit: 50 });

export interface ListPage {
  offset: number;
  limit: number;
}

export function parseListPage(query: Readonly<Record<string, string | undefined>>): ListPage | null {
  const offset = integer(query, 'offset', 0, Number.MAX_SAFE_INTEGER);
  const limit = integer(query, 'limit', 1, LIST_PAGE.maxLimit);
  return offset === undefined && limit === undefined ? null : { offset: offset ?? 0, limit: limit ?? LIST_PAGE.defaultLimit };
}

/** The page's items of `all`, and the count of them all (`total_count`). */
export function pageOf<T>(all: readonly T[], page: ListPage | null): { items: readonly T[]; total: number } {
  return { items: page ? all.slice(page.offset, page.offset + page.limit) : all, total: all.length };
}

function integer(query: Readonly<Record<string, string | undefined>>, name: string, min: number, max: number): number | undefined {
  const raw = query[name];
  // The public document types offset as integer-or-null: an empty value means "not given".
  if (raw === undefined || raw === '' || (name === 'offset' && raw === 'null')) return undefined;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value) || value < min || value > max) {
    throw invalidParameter(name, `must be an integer from ${min} to ${max}`);
  }
  return value;
}

/** The `offset` and `limit` query parameters of a list of `items`, as its route declares them. */
export function listPageParameters(items: string) {
  return [
    { name: 'offset', schema: { type: 'integer', minimum: 0 }, description: `The ${items} to skip, at least 0. With neither offset nor limit the whole list comes back.` },
    {
      name: 'limit',
      schema: { type: 'integer', minimum: 1, maximum: LIST_PAGE.maxLimit },
      description: `Page size, 1 to ${LIST_PAGE.maxLimit}; ${LIST_PAGE.defaultLimit} when only offset is given.`,
    },
  ] as const;
}
