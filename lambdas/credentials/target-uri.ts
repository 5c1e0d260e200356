import { isIPv6 } from 'node:net';

/**
 * The target URI a DPoP proof names (RFC 9449 §4.3 step 9, `htu`), in one normal form, or null.
 *
 * Two grammars read URLs: RFC 3986, which RFC 9449 cites, and the WHATWG URL Standard of `new URL()`
 * and browsers. They disagree on spellings a proof could use to look like another URL: WHATWG reads
 * `0x7f000001`, `127.1` and `127.0.0.1.` as 127.0.0.1 (RFC 3986 as registered names), turns `\`
 * into `/`, and drops tabs, line breaks and surrounding spaces (RFC 3986 allows none). So a value
 * is normalised by both, as RFC 3986 §6.2.2 and §6.2.3 say (scheme and host in lower case, default
 * port dropped, percent-encodings of unreserved characters decoded and the others in upper case,
 * dot segments removed, an empty path as `/`), and is a target only when both parse it and agree
 * on scheme, host, port and path. Query and fragment are not part of it (RFC 9449 §4.2).
 */
export function normalisedTargetUri(value: string): string | null {
  const strict = rfc3986Target(value);
  if (strict === null) return null;
  let whatwg: URL;
  try {
    whatwg = new URL(value);
  } catch {
    return null;
  }
  const agrees =
    whatwg.protocol === `${strict.scheme}:` &&
    whatwg.hostname === strict.host &&
    whatwg.port === strict.port &&
    normalisePercentEncoding(whatwg.pathname) === strict.path &&
    whatwg.username === '' &&
    whatwg.password === '';
  return agrees ? `${strict.scheme}://${strict.host}${strict.port === '' ? '' : `:${strict.port}`}${strict.path}` : null;
}

interface Target {
  scheme: 'http' | 'https';
  host: string;
  /** Empty for the scheme's default port. */
  port: string;
  path: string;
}

/** RFC 3986 §2: the characters a URI may hold at all (unreserved, reserved and `%`). */
const URI_CHARACTERS = /^[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]*$/;
/** RFC 3986 Appendix B, anchored: scheme, authority, path, query, fragment. */
const URI_PARTS = /^([^:/?#]+):(?:\/\/([^/?#]*))?([^?#]*)(?:\?[^#]*)?(?:#.*)?$/;
const PERCENT_ENCODED = /%(?![0-9A-Fa-f]{2})/;
const DEC_OCTET = '(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])';
const IPV4_ADDRESS = new RegExp(`^${DEC_OCTET}(?:\\.${DEC_OCTET}){3}$`);
/** RFC 3986 §3.2.2 reg-name: unreserved, pct-encoded and sub-delims. */
const REG_NAME = /^(?:[A-Za-z0-9\-._~!$&'()*+,;=]|%[0-9A-Fa-f]{2})+$/;
/** RFC 3986 §3.3: a path of an URI with an authority is empty or begins with `/`; its segments hold pchar. */
const PATH_ABEMPTY = /^(?:\/(?:[A-Za-z0-9\-._~!$&'()*+,;=:@]|%[0-9A-Fa-f]{2})*)*$/;
const DEFAULT_PORTS = { http: '80', https: '443' } as const;

function rfc3986Target(value: string): Target | null {
  if (!URI_CHARACTERS.test(value) || PERCENT_ENCODED.test(value)) return null;
  const parts = URI_PARTS.exec(value);
  if (parts === null || parts[2] === undefined) return null;
  const scheme = parts[1]!.toLowerCase();
  if (scheme !== 'http' && scheme !== 'https') return null;
  const authority = /^(\[[^\]]*\]|[^:@[\]]*)(?::([0-9]*))?$/.exec(parts[2]);
  if (authority === null) return null;
  const host = normalisedHost(authority[1]!);
  const port = normalisedPort(authority[2] ?? '', DEFAULT_PORTS[scheme]);
  const path = parts[3]!;
  if (host === null || port === null || !PATH_ABEMPTY.test(path)) return null;
  return { scheme, host, port, path: removeDotSegments(normalisePercentEncoding(path)) || '/' };
}

/** An IPv6 literal, an IPv4 address or a registered name, in lower case; null for anything else (an empty host, IPvFuture). */
function normalisedHost(host: string): string | null {
  if (host.startsWith('[')) return isIPv6(host.slice(1, -1)) ? host.toLowerCase() : null;
  if (IPV4_ADDRESS.test(host)) return host;
  if (!REG_NAME.test(host)) return null;
  const decoded = normalisePercentEncoding(host).toLowerCase();
  // A percent-encoding left after decoding the unreserved ones is read differently by WHATWG.
  return decoded.includes('%') ? null : decoded;
}

function normalisedPort(port: string, defaultPort: string): string | null {
  if (port === '') return '';
  const number = Number(port);
  if (number > 65535) return null;
  return String(number) === defaultPort ? '' : String(number);
}

/** RFC 3986 §6.2.2.1-2: unreserved characters decoded, other percent-encodings in upper case. */
function normalisePercentEncoding(text: string): string {
  return text.replace(/%([0-9A-Fa-f]{2})/g, (escape, hex: string) => {
    const character = String.fromCharCode(parseInt(hex, 16));
    return /[A-Za-z0-9\-._~]/.test(character) ? character : escape.toUpperCase();
  });
}

/** RFC 3986 §5.2.4, over whole segments. */
function removeDotSegments(path: string): string {
  const output: string[] = [];
  const segments = path.split('/').slice(1);
  for (const [index, segment] of segments.entries()) {
    const last = index === segments.length - 1;
    if (segment === '..') output.pop();
    if (segment === '.' || segment === '..') {
      if (last) output.push('');
      continue;
    }
    output.push(segment);
  }
  return output.map((segment) => `/${segment}`).join('');
}
