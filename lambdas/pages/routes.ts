import { PAGES_BASE_PATH } from '../base-paths';
import type { RouteDefinition } from '../route-definition';

/** The Workload identity settings page and its static assets (script, stylesheet), outside the API. */
export const SETTINGS_PAGE_ROUTES = [
  {
    operationId: 'getWorkloadIdentitySettingsPage',
    method: 'GET',
    path: '/workload-identity',
    base: PAGES_BASE_PATH,
    function: 'settingsPage',
    access: 'public',
    summary: 'The Workload identity settings page (HTML; signs in against the API)',
    ok: { status: 200, media: { 'text/html': { schema: { type: 'string' } } } },
  },
  {
    operationId: 'getWorkloadIdentitySettingsAsset',
    method: 'GET',
    path: '/workload-identity/assets/{file}',
    base: PAGES_BASE_PATH,
    function: 'settingsPage',
    access: 'public',
    summary: 'A static file of the settings page (script or stylesheet)',
    ok: { status: 200, media: { 'text/javascript': { schema: { type: 'string' } }, 'text/css': { schema: { type: 'string' } } } },
    errors: [404],
  },
] as const satisfies readonly RouteDefinition[];

/** The declaration of a route the settings page function serves. */
export type SettingsPageRoute = (typeof SETTINGS_PAGE_ROUTES)[number];
