import type { Clock } from '../lambdas/clock';
import { DynamoAccountStore } from '../lambdas/aws/dynamo-account-store';
import { DynamoUsageFold } from '../lambdas/aws/dynamo-usage-fold';
import type { Telemetry } from '../lambdas/observability/telemetry';
import { rollUpUsage, type RollupSummary } from '../lambdas/usage/rollup';
import type { FunctionContext } from '../lambdas/wiring/context';
import { openCompletionsOf } from '../lambdas/wiring/open-completions';

/** How often the local runtime runs the usage rollup, as the stack's schedule does. */
export const LOCAL_ROLLUP_EVERY_MS = 60 * 60 * 1000;

/** The usage rollup over the rollup function's own client, as its Lambda entry wires it. */
export function usageRollup(context: FunctionContext<'keys' | 'usage'>, clock: Clock): () => Promise<RollupSummary> {
  const accounts = new DynamoAccountStore(context.documentClient, context.tables.keys);
  const folder = new DynamoUsageFold(context.documentClient, context.tables.usage);
  return () => rollUpUsage({ organizations: () => accounts.listOrganizations(), folder, died: openCompletionsOf(context), clock });
}

/**
 * Runs the rollup at start and then every `everyMs` (0: never on its own), one run at a time;
 * a run that fails is logged and the next one folds what it left. `first` settles when the run
 * at start has.
 */
export function scheduleRollup(rollup: () => Promise<RollupSummary>, everyMs: number, telemetry: Telemetry): { first: Promise<void>; stop(): Promise<void> } {
  if (everyMs <= 0) return { first: Promise.resolve(), stop: async () => undefined };
  let running: Promise<void> = Promise.resolve();
  const run = () => {
    running = running.then(() =>
      rollup().then(
        (summary) => {
          if (summary.days > 0 || summary.died > 0) telemetry.logger.info('usage rolled up', { ...summary });
        },
        (error: Error) => telemetry.logger.warn('usage rollup failed; the next run folds what is left', { error: error.name, detail: error.message }),
      ),
    );
  };
  run();
  const first = running;
  const timer = setInterval(run, everyMs);
  timer.unref();
  return {
    first,
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}

/**
 * The rollup, scheduled ({@link scheduleRollup}); where the data outlives the process (`kept`),
 * once its run at start has settled: what an earlier process left open is recorded before the
 * service is ready. Data kept by no earlier process holds nothing of the kind.
 */
export async function startRollup(
  context: FunctionContext<'keys' | 'usage'>,
  clock: Clock,
  schedule: { everyMs: number; kept: boolean },
  telemetry: Telemetry,
): Promise<{ rollUp: () => Promise<RollupSummary>; stop(): Promise<void> }> {
  const rollUp = usageRollup(context, clock);
  const scheduled = scheduleRollup(rollUp, schedule.everyMs, telemetry);
  if (schedule.kept) await scheduled.first;
  return { rollUp, stop: () => scheduled.stop() };
}
