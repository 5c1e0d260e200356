/** Lambda entry of the scheduled usage rollup; it reads as every entry does (catalog/entry.ts). */
import { DynamoAccountStore } from '../../aws/dynamo-account-store';
import { DynamoUsageFold } from '../../aws/dynamo-usage-fold';
import { openCompletionsOf } from '../../wiring/open-completions';
import { lambdaEntry } from '../lambda-entry';
import { USAGE_ROLLUP_FUNCTION, createUsageRollupHandler } from './handler';

const { config, telemetry, context } = lambdaEntry('usageRollup', USAGE_ROLLUP_FUNCTION);
const accounts = new DynamoAccountStore(context.documentClient, config.tables.keys);

/** The usage rollup's Lambda handler, run every hour by its schedule. */
export const handler = createUsageRollupHandler({
  organizations: () => accounts.listOrganizations(),
  folder: new DynamoUsageFold(context.documentClient, config.tables.usage),
  died: openCompletionsOf(context),
  clock: context.clock,
  telemetry,
});
