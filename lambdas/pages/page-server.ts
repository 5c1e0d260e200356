import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { NotFoundError } from '../errors';
import { pathParameters } from '../http/request';
import { PAGE_DOCUMENT, type PageAssets } from './page-assets';

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
 * Serves the settings page and its assets: `GET /settings/workload-identity` is the page,
 * `GET /settings/workload-identity/assets/{file}` one of its built files. Nothing else.
 */
export function createPageServer(assets: PageAssets) {
  return async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
    const name = event.resource.endsWith('/assets/{file}') ? pathParameters(event).file : PAGE_DOCUMENT;
    // The page document is served at its own path only, not as an asset.
    const asset = name === undefined || (name === PAGE_DOCUMENT && event.resource.endsWith('/assets/{file}')) ? undefined : assets.get(name);
    if (!asset) throw new NotFoundError('No such page asset');
    return { statusCode: 200, headers: { 'Content-Type': asset.contentType, ...PAGE_SECURITY_HEADERS }, body: asset.body };
  };
}
