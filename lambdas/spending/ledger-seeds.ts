import type { AccountsService } from '../accounts/accounts-service';
import type { Guardrail } from '../accounts/types';
import type { Clock } from '../clock';
import type { SpendBefore } from './spending-gate';
import type { LedgerStore } from './ledgers';
import { spendingLimits, startsFromSpend, workspaceLimits, type SpendingLimit } from './limits';
import { periodAt } from './periods';

/**
 * Ledger seeding (docs/limits.md, "Glossary"): after a management change that may set a
 * spending limit has landed, the ledger of each limit that began during its current period is
 * started at what its scope had spent in that period, so the containers serving the key meet the
 * ledger ready rather than each reading the scope's usage to start it. A key's limit and guardrail
 * budgets, a workspace's budgets. Best effort: a ledger not seeded here is started exactly by the
 * first request that needs it (spending-gate.ts), at the cost of that request reading usage. A
 * ledger that exists is left as it is.
 */
export interface LedgerSeeds {
  /** The limits of these keys of the organization. */
  keys(organizationId: string, keyHashes: readonly string[]): Promise<void>;
  /** The budgets of this workspace (its id). */
  workspace(organizationId: string, workspaceId: string): Promise<void>;
  /** The keys a guardrail is assigned to directly. */
  guardrail(organizationId: string, guardrailId: string): Promise<void>;
}

/** At most this many keys are seeded after one change; the rest start on their first request. */
const MAX_SEEDED_KEYS = 100;

/** The seeds over the accounts service and the ledgers; a failed seed never fails the change. */
export function ledgerSeeds(service: AccountsService, ledgers: Pick<LedgerStore, 'seed'>, spendBefore: SpendBefore, clock: Clock): LedgerSeeds {
  const seed = async (limits: readonly SpendingLimit[]) => {
    // A failed seed costs only the first request's read of usage: never the change that landed.
    await seedLedgers(ledgers, spendBefore, limits, clock.now()).catch(() => undefined);
  };
  const keyLimits = async (organizationId: string, hash: string): Promise<SpendingLimit[]> => {
    const key = await service.getApiKey(organizationId, hash);
    const workspace = key.workspaceId ? await service.getWorkspace(organizationId, key.workspaceId).catch(() => null) : null;
    const ids = [...new Set([...key.guardrailIds, ...(workspace?.guardrailIds ?? [])])];
    const guardrails = (await Promise.all(ids.map((id) => service.getGuardrail(organizationId, id).catch(() => undefined)))).filter((g): g is Guardrail => g !== undefined);
    return spendingLimits({ key, workspace }, guardrails);
  };
  const keys = async (organizationId: string, hashes: readonly string[]) => {
    const limits = await Promise.all(hashes.slice(0, MAX_SEEDED_KEYS).map((hash) => keyLimits(organizationId, hash).catch(() => [])));
    await seed(limits.flat());
  };
  return {
    keys,
    async workspace(organizationId, workspaceId) {
      await seed(workspaceLimits(await service.getWorkspace(organizationId, workspaceId)));
    },
    async guardrail(organizationId, guardrailId) {
      const assigned = await service.listKeyAssignments(organizationId, guardrailId);
      await keys(
        organizationId,
        assigned.map((assignment) => assignment.key.hash),
      );
    },
  };
}

/** Starts, for each limit that began during its current period, that period's ledger at what the scope had spent in it. */
async function seedLedgers(ledgers: Pick<LedgerStore, 'seed'>, spendBefore: SpendBefore, limits: readonly SpendingLimit[], at: Date): Promise<void> {
  for (const limit of new Map(limits.map((limit) => [limit.ledger, limit])).values()) {
    if (!startsFromSpend(limit, at)) continue;
    const base = await spendBefore(limit.scope, limit.window, at);
    await ledgers.seed({ ledger: limit.ledger, period: periodAt(limit.window, at).id }, base);
  }
}
