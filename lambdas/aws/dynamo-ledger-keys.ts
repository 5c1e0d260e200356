import { LEDGER_PREFIX, type HoldRef, type LedgerRef } from '../spending/ledgers';

/**
 * Where the ledgers' items and attributes are (docs/architecture.md, "Spending limits"): a
 * ledger's item, `BUDGET#<ledger>` / `<period>`, and its branches', `BUDGET#<ledger>#<branch>` /
 * `<period>`; an attribute per hold bucket and writer epoch, `<prefix><bucket>:<epoch>`, on
 * either (a ledger's holds, `h:`; a branch's room, `room:`, and next chunk, `chunk:`).
 */

/** The key of a ledger's item for one period. */
export const ledgerKey = (ref: LedgerRef) => ({ pk: `${LEDGER_PREFIX}${ref.ledger}`, sk: ref.period });

/** The key of one branch's item of a ledger's period. */
export const branchKey = (ref: LedgerRef, branch: number) => ({ pk: `${LEDGER_PREFIX}${ref.ledger}#${branch}`, sk: ref.period });

/** The prefix of a ledger's hold attributes. */
export const HOLD_PREFIX = 'h:';

/** The attribute, of those named by `prefix`, that counts one bucket and writer epoch. */
export const bucketAttribute = (prefix: string, hold: HoldRef): string => `${prefix}${hold.bucket}:${hold.epoch}`;

/** The ledger attribute that counts the holds of one bucket and writer epoch. */
export const holdAttribute = (hold: HoldRef): string => bucketAttribute(HOLD_PREFIX, hold);

/** The bucket and epoch an attribute named by `prefix` counts; undefined for any other attribute. */
export function bucketOfAttribute(prefix: string, name: string): HoldRef | undefined {
  if (!name.startsWith(prefix)) return undefined;
  const [bucket, epoch] = name.slice(prefix.length).split(':');
  const parsed = Number(bucket);
  return Number.isSafeInteger(parsed) && epoch !== undefined ? { bucket: parsed, epoch } : undefined;
}
