import { readFileSync, readdirSync } from 'node:fs';
import { extname, join } from 'node:path';

/** One static file of a settings page, as built (web/build.ts). */
export interface PageAsset {
  readonly body: string;
  readonly contentType: string;
}

/** Asset file name to asset; the page itself is {@link PAGE_DOCUMENT}. */
export type PageAssets = ReadonlyMap<string, PageAsset>;

/** The file that is the page at `/settings/workload-identity`. */
export const PAGE_DOCUMENT = 'workload-identity.html';

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.png': 'image/png',
};

/** The `Content-Type` a page file is served with, by its extension; undefined for a file that is not served. */
export function contentTypeOf(fileName: string): string | undefined {
  return CONTENT_TYPES[extname(fileName)];
}

/**
 * Reads the built assets from a folder, once per cold start. A folder without the page
 * fails the start, naming it, rather than every request.
 */
export function readPageAssets(dir: string): PageAssets {
  const assets = new Map<string, PageAsset>();
  for (const name of readdirSync(dir)) {
    const contentType = contentTypeOf(name);
    if (contentType) assets.set(name, { body: readFileSync(join(dir, name), 'utf8'), contentType });
  }
  if (!assets.has(PAGE_DOCUMENT)) throw new Error(`${dir} holds no ${PAGE_DOCUMENT}`);
  return assets;
}
