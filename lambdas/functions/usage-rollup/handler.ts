import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { Context, ScheduledEvent } from 'aws-lambda';
import type { FunctionRequirements } from '../../config';
import type { Telemetry } from '../../observability/telemetry';
import { traceHandler } from '../../observability/tracing';
import { RollupError, rollUpUsage, type RollupDeps, type RollupSummary } from '../../usage/rollup';

/** Reads the organizations from the keys table; folds and rebuilds in the usage table. */
export const USAGE_ROLLUP_FUNCTION = { tables: ['keys', 'usage'] } as const satisfies FunctionRequirements;

/** What the rollup handler uses: the rollup's dependencies and the telemetry. */
export interface UsageRollupDeps extends RollupDeps {
  telemetry: Telemetry;
}

/**
 * The usage rollup, run on a schedule (EventBridge, every hour): folds every organization's
 * closed days and rebuilds the popularity figures (lambdas/usage/rollup.ts). A failed fold fails
 * the invocation, so it shows in the function's errors and alarm; the next run folds it.
 */
export function createUsageRollupHandler(deps: UsageRollupDeps) {
  const { logger } = deps.telemetry;
  const run = async (): Promise<RollupSummary> => {
    try {
      const summary = await rollUpUsage(deps);
      logger.info('usage rolled up', { ...summary });
      return summary;
    } catch (error) {
      if (error instanceof RollupError) logger.error('usage rollup incomplete', { ...error.summary, failed: error.failed.length });
      throw error;
    }
  };
  return middy<ScheduledEvent, RollupSummary, Error, Context>()
    .use(injectLambdaContext(logger, { resetKeys: true, logEvent: false }))
    .use(traceHandler<ScheduledEvent, RollupSummary>(deps.telemetry))
    .handler(run);
}
