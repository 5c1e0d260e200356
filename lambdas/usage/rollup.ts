import type { Clock } from '../clock';
import type { ModelUsage } from '../catalog/types';

/** What the rollup folds with (lambdas/aws/dynamo-usage-fold.ts). */
export interface UsageFolder {
  /** Folds the organization's closed days not folded yet; the days that had usage. */
  foldOrganization(organizationId: string, now: Date): Promise<string[]>;
  /** Rebuilds the popularity figures the catalog reads from the folded days. */
  buildPopularity(now: Date): Promise<ModelUsage>;
}

/** What the rollup records of completions that never ended (lambdas/aws/dynamo-open-completions.ts). */
export interface DiedCompletions {
  /**
   * Records each completion left open whose function can no longer be running at `now`,
   * as its usage and generation, once however many rollups run: how many were recorded, and the
   * organizations of those that could not be (the next run tries them again).
   */
  recordDied(now: Date): Promise<{ recorded: number; failed: ReadonlySet<string> }>;
}

/** What the rollup works with: the organizations, the folder, the completions left open, and the clock. */
export interface RollupDeps {
  /** Every organization. */
  organizations(): Promise<readonly { id: string }[]>;
  folder: UsageFolder;
  died: DiedCompletions;
  clock: Clock;
}

/** What one run of the rollup did, for its log line. */
export interface RollupSummary {
  organizations: number;
  /** Organization days folded. */
  days: number;
  /** Models in the popularity figures. */
  models: number;
  /** Completions that never ended, recorded. */
  died: number;
}

/** Organizations folded side by side. */
const PARALLEL_FOLDS = 8;

/**
 * The usage rollup (docs/architecture.md, "Usage over time"), off the request path: the
 * completions whose functions died recorded, then every organization's closed days folded, then
 * the popularity figures rebuilt. The recording comes first, so that no day is folded before what
 * died in it is recorded: an organization one of whose died completions could not be recorded is
 * not folded in this run, and a recording that fails as a whole (its reads) stops the run. An
 * organization whose fold fails does not stop the others; the rollup then fails, naming how
 * many, and its next run folds what is left (every fold is idempotent).
 */
export async function rollUpUsage(deps: RollupDeps): Promise<RollupSummary> {
  const now = deps.clock.now();
  const died = await deps.died.recordDied(now);
  const organizations = await deps.organizations();
  let days = 0;
  const failed: string[] = [];
  for (let start = 0; start < organizations.length; start += PARALLEL_FOLDS) {
    await Promise.all(
      organizations.slice(start, start + PARALLEL_FOLDS).map(async ({ id }) => {
        try {
          if (died.failed.has(id)) throw new Error('a died completion of the organization is not recorded yet');
          // Read once the fold is done: `days += await …` would add to the count as it was before the await, losing the others'.
          const folded = (await deps.folder.foldOrganization(id, now)).length;
          days += folded;
        } catch {
          failed.push(id);
        }
      }),
    );
  }
  const figures = await deps.folder.buildPopularity(now);
  const summary = { organizations: organizations.length, days, models: figures.size, died: died.recorded };
  if (failed.length > 0) throw new RollupError(failed, summary);
  return summary;
}

/** A rollup that folded every organization but `failed`. */
export class RollupError extends Error {
  constructor(
    readonly failed: readonly string[],
    readonly summary: RollupSummary,
  ) {
    super(`the usage of ${failed.length} of ${summary.organizations} organizations could not be folded; the next run folds it`);
    this.name = 'RollupError';
  }
}
