import { NotFoundError } from '../errors';
import { createDispatcher, Representation, type Operations } from '../http/dispatcher';
import { PAGE_DOCUMENT, type PageAsset, type PageAssets } from './page-assets';
import type { SettingsPageRoute } from './routes';

/**
 * What every page response carries: the page runs only its own script and stylesheet, talks
 * only to its own origin, cannot be framed, and sends no Referer (its URL is harmless, but
 * nothing of the settings area should leak to other sites).
 */
export const PAGE_SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
    "object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  // Small and changed with every deployment: revalidated rather than cached stale.
  'Cache-Control': 'no-cache',
});

/**
 * Serves the settings page and its assets, through the dispatcher (lambdas/http/dispatcher.ts):
 * `GET /settings/workload-identity` is the page, `GET /settings/workload-identity/assets/{file}`
 * one of its built files. Nothing else.
 */
export function createPageServer(routes: readonly SettingsPageRoute[], assets: PageAssets) {
  const operations: Operations<SettingsPageRoute, PageAssets> = {
    getWorkloadIdentitySettingsPage: () => representation(assets.get(PAGE_DOCUMENT)),
    // The page document is served at its own path only, not as an asset.
    getWorkloadIdentitySettingsAsset: ({ params: { file } }) => representation(file === undefined || file === PAGE_DOCUMENT ? undefined : assets.get(file)),
  };
  return createDispatcher({ routes, operations, deps: assets });
}

function representation(asset: PageAsset | undefined): Representation {
  if (!asset) throw new NotFoundError('No such page asset');
  return new Representation(asset.body, asset.contentType, PAGE_SECURITY_HEADERS);
}
