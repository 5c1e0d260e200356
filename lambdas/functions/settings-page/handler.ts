import type { FunctionRequirements } from '../../config';
import { apiHandler } from '../../http/middleware';
import type { Telemetry } from '../../observability/telemetry';
import type { PageAssets } from '../../pages/page-assets';
import { createPageServer } from '../../pages/page-server';
import { routesOf } from '../../routes';

/** No table, no key: only the page's own built files, from the function package. */
export const SETTINGS_PAGE_FUNCTION = { tables: [], settings: ['pageAssetsDir'] } as const satisfies FunctionRequirements;

/** What the settings page handler uses: the page's built files, read once per container. */
export interface SettingsPageHandlerDeps {
  assets: PageAssets;
  telemetry: Telemetry;
}

/** The Workload identity settings page (docs/reference.md#workload-identity): a client of the admin API, nothing more. */
export function createSettingsPageHandler(deps: SettingsPageHandlerDeps) {
  return apiHandler(createPageServer(routesOf('settingsPage'), deps.assets), deps.telemetry);
}
