/** SPEC 9: every endpoint lives under `/api/v1`. */
export const API_BASE_PATH = '/api/v1';

/**
 * The settings pages (SPEC 1, 4.7): served by the same REST API stage as the API, so the page
 * and the API share an origin and the management key never crosses one. Not part of the
 * versioned API.
 */
export const PAGES_BASE_PATH = '/settings';
