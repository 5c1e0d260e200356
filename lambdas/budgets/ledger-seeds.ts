import type { SpendBefore } from './budget-gate';
import type { BudgetLedgerStore } from './budget-ledgers';
import { startsFromSpend, type BudgetLayer } from './layers';
import { periodAt } from './periods';

/**
 * Creates, for each layer that began during its current period, that period's ledger at what
 * the scope had spent in it: what a change that sets a limit does right after it lands, so the
 * containers serving the key meet the ledger ready rather than each reading the scope's usage to
 * start it (budget-gate.ts does that only for a ledger nobody seeded). A ledger that exists is
 * left as it is.
 */
export async function seedLedgers(ledgers: Pick<BudgetLedgerStore, 'seed'>, spendBefore: SpendBefore, layers: readonly BudgetLayer[], at: Date): Promise<number> {
  let seeded = 0;
  for (const layer of new Map(layers.map((layer) => [layer.ledger, layer])).values()) {
    if (!startsFromSpend(layer, at)) continue;
    const base = await spendBefore(layer.scope, layer.window, at);
    if (await ledgers.seed({ ledger: layer.ledger, period: periodAt(layer.window, at).id }, base)) seeded++;
  }
  return seeded;
}
