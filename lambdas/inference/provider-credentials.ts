import { readFile } from 'node:fs/promises';
import type { Clock } from '../clock';
import { lookupByProvider, type ProviderCredentials } from './upstream';

/**
 * Provider credentials from a JSON document `{"<provider tag, provider or *>": "<API key>"}`,
 * loaded through `load` and kept for `maxAgeSeconds`, so a rotated key is picked up
 * without a redeploy. The document is never logged; a malformed one fails with a message
 * that names the problem, not the content.
 */
export class CachedProviderCredentials implements ProviderCredentials {
  private cached: { at: number; values: Promise<Record<string, string>> } | undefined;

  constructor(
    private readonly load: () => Promise<string | undefined>,
    private readonly clock: Clock,
    private readonly maxAgeSeconds: number,
  ) {}

  async forProvider(tag: string): Promise<string | undefined> {
    const now = this.clock.now().getTime();
    if (!this.cached || now - this.cached.at >= this.maxAgeSeconds * 1000) {
      const values = this.load().then(parseCredentials);
      this.cached = { at: now, values };
      // A failed load is retried on the next request rather than cached.
      values.catch(() => {
        if (this.cached?.values === values) this.cached = undefined;
      });
    }
    return lookupByProvider(await this.cached.values, tag);
  }
}

/** The credentials document as a map of provider to API key; an empty key is left out, and a malformed document fails without showing its content. */
export function parseCredentials(text: string | undefined): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  if (text === undefined || text.trim() === '') return out;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error('provider credentials are not a JSON object');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('provider credentials are not a JSON object');
  for (const [provider, value] of Object.entries(parsed)) {
    if (typeof value !== 'string') throw new Error(`provider credential for "${provider}" is not a string`);
    if (value !== '') out[provider] = value;
  }
  return out;
}

/** Local runtime: the credentials file under `.local/`; absent means no provider needs one. */
export function fileCredentials(path: string, clock: Clock): ProviderCredentials {
  return new CachedProviderCredentials(
    async () => {
      try {
        return await readFile(path, 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw error;
      }
    },
    clock,
    5,
  );
}
