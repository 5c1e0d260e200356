import type { CatalogEntry } from './types';

/**
 * The `data` of `GET /providers`, serialized: one entry per provider serving the catalog (the
 * part of an endpoint's tag before any `/offering`), named as its first endpoint names it, in
 * name order. The catalog records no provider's policies or locations: those members are null
 * or absent.
 */
export function providersDataJson(entries: readonly CatalogEntry[]): string {
  const names = new Map<string, string>();
  for (const entry of entries) {
    for (const endpoint of entry.endpoints) {
      const slug = endpoint.tag.split('/')[0]!.toLowerCase();
      if (!names.has(slug)) names.set(slug, endpoint.provider_name);
    }
  }
  const providers = [...names].map(([slug, name]) => ({ name, slug, privacy_policy_url: null }));
  providers.sort((a, b) => (a.name === b.name ? a.slug.localeCompare(b.slug) : a.name.localeCompare(b.name)));
  return JSON.stringify(providers);
}
