import type { AccountsService } from '../accounts/accounts-service';
import { inBatches } from '../batches';
import type { ApiKeyRecord, Guardrail } from '../accounts/types';
import type { Clock } from '../clock';
import type { SpendBefore } from './spending-gate';
import type { LedgerStart, LedgerStore } from './ledgers';
import { readFlight } from './in-flight';
import { scopeKey } from './holds';
import { spendingLimits, startsFromSpend, workspaceLimits, type SpendingLimit, type SpendScope } from './limits';
import { periodAt } from './periods';
import { spentIn } from './spend-before';
import type { KeyUsage, UsageStore } from '../usage/usage';
import { ZERO, compare } from '../usd';

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

/** Keys read, and ledgers seeded, this many at a time. */
const SEED_CONCURRENCY = 16;
/**
 * A change seeds for at most this long, so that it answers within API Gateway's 29 seconds
 * whatever the number of keys: a ledger left unseeded starts on its first request.
 */
export const SEED_TIME_MS = 10_000;

/** Where a seed reads what its scopes spent: a workspace's (spend-before.ts), and many keys' at once. */
export interface SeedReads {
  spendBefore: SpendBefore;
  usage: Pick<UsageStore, 'keyUsage'>;
}

/** The seeds over the accounts service and the ledgers; a failed seed never fails the change. */
export function ledgerSeeds(service: AccountsService, ledgers: Pick<LedgerStore, 'seed' | 'spendItems'>, reads: SeedReads, clock: Clock): LedgerSeeds {
  const seed = async (limits: readonly SpendingLimit[], deadline: number) => {
    // A failed seed costs only the first request's read of usage: never the change that landed.
    await seedLedgers(ledgers, reads, limits, clock, deadline).catch(() => undefined);
  };
  /** The keys' limits, each key read by its hash, or given as read (`key`). */
  const keys = async (organizationId: string, wanted: ReadonlyArray<{ hash: string; key?: ApiKeyRecord }>) => {
    const deadline = clock.now().getTime() + SEED_TIME_MS;
    // Each key's workspace and guardrails, read once for all the keys that share them.
    const workspaces = memo((id: string) => service.getWorkspace(organizationId, id).catch(() => null));
    const guardrails = memo((id: string) => service.getGuardrail(organizationId, id).catch(() => undefined));
    const limits: SpendingLimit[] = [];
    await inBatches(
      wanted,
      async ({ hash, key: given }) => {
        if (clock.now().getTime() > deadline) return;
        const key = given ?? (await service.getApiKey(organizationId, hash).catch(() => undefined));
        if (!key) return;
        const workspace = key.workspaceId ? await workspaces(key.workspaceId) : null;
        const found = await Promise.all([...new Set([...key.guardrailIds, ...(workspace?.guardrailIds ?? [])])].map(guardrails));
        limits.push(...spendingLimits({ key, workspace }, found.filter((g): g is Guardrail => g !== undefined)));
      },
      SEED_CONCURRENCY,
    );
    await seed(limits, deadline);
  };
  return {
    keys: (organizationId, keyHashes) => keys(organizationId, keyHashes.map((hash) => ({ hash }))),
    async workspace(organizationId, workspaceId) {
      await seed(workspaceLimits(await service.getWorkspace(organizationId, workspaceId)), clock.now().getTime() + SEED_TIME_MS);
    },
    async guardrail(organizationId, guardrailId) {
      // The keys as the listing read them: not read again one by one.
      const assigned = await service.listKeyAssignments(organizationId, guardrailId);
      await keys(
        organizationId,
        assigned.items.map(({ key }) => ({ hash: key.hash, key })),
      );
    },
  };
}

/** `read` once per argument. */
function memo<T>(read: (id: string) => Promise<T>): (id: string) => Promise<T> {
  const found = new Map<string, Promise<T>>();
  return (id) => {
    let value = found.get(id);
    if (!value) found.set(id, (value = read(id)));
    return value;
  };
}

/**
 * Starts, for each limit that began during its current period, that period's ledger at what the
 * scope had spent in it and has in flight (in-flight.ts), until `deadline`. What each scope has in
 * flight is read first, then the usage: the keys' once for them all (their running totals, and
 * the organization's usage after them from its index), not key by key. A key that has spent
 * nothing today serves no fleet that would start its ledger at once: it is left to its first
 * request, which starts it as a seed would, and the seed reads no spend shard of it.
 */
async function seedLedgers(ledgers: Pick<LedgerStore, 'seed' | 'spendItems'>, reads: SeedReads, limits: readonly SpendingLimit[], clock: Clock, deadline: number): Promise<void> {
  const at = clock.now();
  const starting = [...new Map(limits.map((limit) => [limit.ledger, limit])).values()].filter((limit) => startsFromSpend(limit, at));
  const active = await activeToday(reads, starting, at);
  const flights = new Map<string, (spent: string) => LedgerStart>();
  const scopes = [...new Map(starting.map(({ scope }) => [scopeKey(scope), scope])).entries()].filter(([, scope]) => active(scope));
  await inBatches(
    scopes,
    async ([key, scope]) => {
      if (clock.now().getTime() <= deadline) flights.set(key, await readFlight(ledgers, scope, at));
    },
    SEED_CONCURRENCY,
  );
  const read = starting.filter(({ scope }) => flights.has(scopeKey(scope)));
  const spent = await keysUsage(reads, read, at);
  await inBatches(
    read,
    async (limit) => {
      if (clock.now().getTime() > deadline) return;
      const { scope } = limit;
      const base = scope.kind === 'key' ? spentIn(spent.get(scope.organizationId)?.get(scope.keyHash), limit.window) : await reads.spendBefore(scope, limit.window, at);
      await ledgers.seed({ ledger: limit.ledger, period: periodAt(limit.window, at).id }, flights.get(scopeKey(scope))!(base));
    },
    SEED_CONCURRENCY,
  );
}

/** Whether a scope of `limits` is worth seeding: a workspace always, a key when it spent today. */
async function activeToday(reads: SeedReads, limits: readonly SpendingLimit[], at: Date): Promise<(scope: SpendScope) => boolean> {
  const spent = await keysUsage(reads, limits, at);
  return (scope) => scope.kind !== 'key' || compare(spentIn(spent.get(scope.organizationId)?.get(scope.keyHash), 'day'), ZERO) > 0;
}

/** The usage of every key scope of `limits`, read once per organization. */
async function keysUsage(reads: SeedReads, limits: readonly SpendingLimit[], at: Date): Promise<Map<string, Map<string, KeyUsage>>> {
  const keys = new Map<string, Set<string>>();
  for (const { scope } of limits) if (scope.kind === 'key') (keys.get(scope.organizationId) ?? keys.set(scope.organizationId, new Set()).get(scope.organizationId)!).add(scope.keyHash);
  return new Map(await Promise.all([...keys].map(async ([organizationId, hashes]) => [organizationId, await reads.usage.keyUsage(organizationId, [...hashes], at)] as const)));
}
