/** Lambda entry of the settings page function; it reads as every entry does (catalog/entry.ts), with no DynamoDB client. */
import { resolve } from 'node:path';
import { loadConfig } from '../../config';
import { SETTINGS_PAGE_FUNCTION, createSettingsPageHandler } from './handler';
import { createTelemetry } from '../../observability/telemetry';
import { readPageAssets } from '../../pages/page-assets';

const config = loadConfig(process.env, SETTINGS_PAGE_FUNCTION);
const telemetry = createTelemetry({ functionName: 'settingsPage', logLevel: config.logLevel });
// Relative to the function package (Lambda's working folder), where the bundling step put the built page.
const assets = readPageAssets(resolve(process.env.LAMBDA_TASK_ROOT ?? process.cwd(), config.pageAssetsDir));

/** The settings page function's Lambda handler. */
export const handler = createSettingsPageHandler({ assets, telemetry });
