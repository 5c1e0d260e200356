import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { PAGE_DOCUMENT, contentTypeOf, type PageAsset, type PageAssets } from '../lambdas/pages/page-assets';

/** Sources of the settings pages. */
export const SETTINGS_SOURCE_DIR = join(__dirname, 'settings');

/**
 * Builds the Workload identity settings page: the client bundled by esbuild into one ES
 * module (no runtime fetch from anywhere but the page's own origin), beside its one
 * stylesheet and its HTML document. The local runtime serves the result from memory; the
 * stack's bundling step writes it into the settings page function's package.
 */
export async function buildSettingsPage(): Promise<PageAssets> {
  const result = await build({
    entryPoints: [join(SETTINGS_SOURCE_DIR, 'workload-identity.ts')],
    bundle: true,
    format: 'esm',
    target: 'es2022',
    platform: 'browser',
    minify: true,
    legalComments: 'none',
    write: false,
    outfile: 'workload-identity.js',
    logLevel: 'warning',
  });
  const assets = new Map<string, PageAsset>();
  const add = (name: string, body: string) => assets.set(name, { body, contentType: contentTypeOf(name)! });
  add('workload-identity.js', result.outputFiles[0]!.text);
  add('workload-identity.css', readFileSync(join(SETTINGS_SOURCE_DIR, 'workload-identity.css'), 'utf8'));
  add(PAGE_DOCUMENT, readFileSync(join(SETTINGS_SOURCE_DIR, PAGE_DOCUMENT), 'utf8'));
  return assets;
}

/** Writes the built page into `dir` (the function package's asset folder). */
export async function writeSettingsPage(dir: string): Promise<void> {
  mkdirSync(dir, { recursive: true });
  for (const [name, asset] of await buildSettingsPage()) writeFileSync(join(dir, name), asset.body);
}
