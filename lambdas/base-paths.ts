/** docs/reference.md#versioning: every endpoint lives under `/api/v1`. */
export const API_BASE_PATH = '/api/v1';

/**
 * The settings pages (docs/reference.md#workload-identity): served by the same REST API stage as the API, so the page
 * and the API share an origin and the management key never crosses one. Not part of the
 * versioned API.
 */
export const PAGES_BASE_PATH = '/settings';

/**
 * The host root's well-known folder (RFC 8615): the RFC 8414 and RFC 9728 documents at their
 * path-inserted locations, `/.well-known/<document>{API base path}`. They are reachable there
 * where the deployment owns the host root: the local runtime, and a custom domain that maps the
 * stage at its root.
 */
export const WELL_KNOWN_BASE_PATH = '/.well-known';
