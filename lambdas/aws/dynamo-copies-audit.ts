import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { systemRandom } from '../clock';
import { copiedKind, type CopiedKindName } from './copy-kinds';
import { DynamoItems, itemId } from './dynamo-items';
import { COPY_PREFIX, ReadReplicas, copyKey, copyOf, revisionOf, sameValue, type CopyKind, type ItemKey } from './dynamo-read-replicas';

/** What one kind of copied item was found to have. */
export interface CopiesCount {
  /** Items of the kind. */
  items: number;
  /** Copies that do not exist (an item written by a release before copies). */
  missing: number;
  /** Copies at an older revision than their item, or marked deleted while it exists. */
  behind: number;
  /** Copies still readable whose item does not exist (a create or delete of an earlier release cut short). */
  orphaned: number;
  /** Items whose copies a repair wrote. */
  repaired: number;
}

/** What a check or repair found, per kind of copied item. */
export type CopiesReport = Record<CopiedKindName, CopiesCount>;

/** Items whose copies are read in one go: at most 64 copies each, 100 keys a BatchGetItem. */
const ITEMS_PER_READ = 16;

/**
 * Checks and repairs the read copies of keys, organizations, workspaces and guardrails
 * (lambdas/aws/dynamo-read-replicas.ts) across the keys table, for `npm run ops -- copies
 * check|repair`. Every item is compared with each of its copies; every copy still readable is
 * matched with its item. A repair writes as a change does: the item's copies in one transaction,
 * under the revision the item is at; an orphan's copies marked deleted on condition that its item
 * still does not exist. Items are read a page at a time, so the table may be of any size.
 */
export class CopiesAudit {
  private readonly items: DynamoItems;
  private readonly copies: ReadReplicas;

  constructor(
    client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {
    this.items = new DynamoItems(client, tableName);
    this.copies = new ReadReplicas(client, tableName, systemRandom);
  }

  check(): Promise<CopiesReport> {
    return this.audit(false);
  }

  repair(): Promise<CopiesReport> {
    return this.audit(true);
  }

  private async audit(repair: boolean): Promise<CopiesReport> {
    const report = emptyReport();
    const audited = new Set<string>();
    const items = this.items.scanPages({
      FilterExpression: 'NOT begins_with(pk, :copy)',
      ExpressionAttributeValues: { ':copy': COPY_PREFIX },
      ConsistentRead: true,
    });
    for await (const page of items) {
      const copied = page.flatMap((item) => {
        const key = { pk: item.pk as string, sk: item.sk as string };
        const found = copiedKind(key);
        return found ? [{ item, key, ...found }] : [];
      });
      for (let start = 0; start < copied.length; start += ITEMS_PER_READ) {
        const batch = copied.slice(start, start + ITEMS_PER_READ);
        const copies = await this.items.batchGet(batch.flatMap(({ key, kind }) => copyKeys(key, kind)));
        for (const { item, key, name, kind } of batch) {
          audited.add(itemId(key.pk, key.sk));
          const counted = report[name];
          const { missing, behind } = compare(item, kind, copyKeys(key, kind).map((copy) => copies.get(itemId(copy.pk, copy.sk))));
          counted.items++;
          counted.missing += missing;
          counted.behind += behind;
          if (repair && missing + behind > 0 && (await this.copies.change(key, kind, () => undefined))) counted.repaired++;
        }
      }
    }
    await this.auditOrphans(audited, report, repair);
    return report;
  }

  /** Copies still readable whose item was not among those audited, and does not exist now. */
  private async auditOrphans(audited: ReadonlySet<string>, report: CopiesReport, repair: boolean): Promise<void> {
    const orphans = new Map<string, { key: ItemKey; name: CopiedKindName; kind: CopyKind; readable: number }>();
    const readable = this.items.scanPages({
      FilterExpression: 'begins_with(pk, :copy) AND attribute_not_exists(deleted)',
      ExpressionAttributeValues: { ':copy': COPY_PREFIX },
      ProjectionExpression: 'pk',
      ConsistentRead: true,
    });
    for await (const page of readable) {
      for (const copy of page) {
        const key = itemOfCopy(copy.pk as string);
        const found = key && copiedKind(key);
        if (!key || !found || audited.has(itemId(key.pk, key.sk))) continue;
        const orphan = orphans.get(itemId(key.pk, key.sk)) ?? { key, ...found, readable: 0 };
        orphan.readable++;
        orphans.set(itemId(key.pk, key.sk), orphan);
      }
    }
    for (const { key, name, kind, readable: count } of orphans.values()) {
      // Created since the scan read the items: its copies are its own.
      if (await this.items.getItem(key)) continue;
      report[name].orphaned += count;
      if (!repair) continue;
      const outcome = await this.items.transact([
        { ConditionCheck: { TableName: this.tableName, Key: key, ConditionExpression: 'attribute_not_exists(pk)' } },
        ...this.copies.deletionPuts(key, kind),
      ]);
      if (outcome.written) report[name].repaired++;
    }
  }
}

/** Whether a report found anything to repair. */
export function needsRepair(report: CopiesReport): boolean {
  return Object.values(report).some((count) => count.missing + count.behind + count.orphaned > 0);
}

function emptyReport(): CopiesReport {
  const count = (): CopiesCount => ({ items: 0, missing: 0, behind: 0, orphaned: 0, repaired: 0 });
  return { key: count(), organization: count(), workspace: count(), guardrail: count() };
}

function copyKeys(key: ItemKey, kind: CopyKind): ItemKey[] {
  return Array.from({ length: kind.count }, (_, n) => copyKey(key, n));
}

/**
 * How many of an item's copies are missing or behind it. A copy at a later revision holds a
 * change that landed after the item was read: it is not behind.
 */
function compare(item: Record<string, unknown>, kind: CopyKind, copies: readonly (Record<string, unknown> | undefined)[]): { missing: number; behind: number } {
  const expected = copyOf(item, kind.withheld);
  let missing = 0;
  let behind = 0;
  for (const copy of copies) {
    if (!copy) missing++;
    else if (copy.deleted === true || revisionOf(copy) < revisionOf(item)) behind++;
    else if (revisionOf(copy) === revisionOf(item) && !sameValue(copyOf(copy, []), expected)) behind++;
  }
  return { missing, behind };
}

/** The item a copy's partition-key value names (`COPY#<pk>#<sk>#<n>`), when it is of a copied kind. */
function itemOfCopy(copyPk: string): ItemKey | undefined {
  const match = /^COPY#(APIKEY#[^#]+|ORG#[^#]+)#(APIKEY|ORG|WORKSPACE#[^#]+|GUARDRAIL#[^#]+)#\d+$/.exec(copyPk);
  return match ? { pk: match[1]!, sk: match[2]! } : undefined;
}
