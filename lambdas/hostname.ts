/**
 * A host name as the service compares it, normalised once for every check: lower case, without
 * port, and without the one trailing dot of a fully qualified name (`EU.Example.com.:443` and
 * `eu.example.com` are the same host; so are `localhost.` and `localhost`). An IPv6 literal keeps
 * its brackets (`[::1]:8787` is `[::1]`). Used for the request's `Host` (lambdas/http/request.ts),
 * the regional hostnames of the configuration, and the hosts of identity-provider URLs
 * (lambdas/federation/federation-validation.ts).
 */
export function normalizeHostname(raw: string): string {
  let host = raw.trim().toLowerCase();
  if (host.startsWith('[')) {
    // An IPv6 literal: `[::1]:8787`.
    const end = host.indexOf(']');
    return end < 0 ? host : host.slice(0, end + 1);
  }
  host = host.replace(/:\d*$/, '');
  return host.endsWith('.') ? host.slice(0, -1) : host;
}

/**
 * Whether `raw` is a base URL a service may be configured with: `https://`, or `http://` on a
 * loopback host; no query or fragment; a trailing slash only when `trailingSlash` allows it.
 */
export function isServiceBaseUrl(raw: string, trailingSlash = false): boolean {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return false;
  }
  const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
  const scheme = url.protocol === 'https:' || (url.protocol === 'http:' && loopback);
  return scheme && !url.search && !url.hash && !raw.includes('#') && !raw.includes('?') && (trailingSlash || !raw.endsWith('/'));
}
