import { NumberValue, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { addDecimals } from '../decimal';
import { systemRandom, type Random } from '../clock';
import { FIRST_DATE, USAGE_SORT_DAYS, closedThrough, daysBefore, mondayOf, nextDate, periodStarts } from '../usage/usage';
import type { ModelUsage } from '../catalog/types';
import { negate } from '../usd';
import { DynamoItems, itemId, type BatchWrite } from './dynamo-items';
import { NO_WORKSPACE, activityPartition, decimal, foldMarkKey, monthAttribute, organizationShards, sumRows, totalsKey, weekAttribute, workspaceTotalsKey, type SummedRow } from './dynamo-usage-store';

/**
 * The fold of closed days (docs/architecture.md, "Usage over time"): an organization's usage
 * shards of each UTC day that is over (`closedThrough`), summed once, off the request path, into
 * activity rows, each key's running totals (`KEY#<hash>` / `USAGE_TOTALS`: `all`, the month's and
 * the week's cost, `foldedThrough`; added on condition that they do not hold the day yet), each
 * workspace's (its keys' rows, whatever became of the keys), the day's requests and tokens per
 * model for the popularity figures, and last the fold mark.
 *
 * Days are folded in order, each one's writes before its mark, each write idempotent (puts of
 * what the shards sum to, additions conditional on the day): a fold sent twice, two at once, or
 * one killed half way and run again leaves every view as exact as before it.
 */
export class DynamoUsageFold {
  private readonly items: DynamoItems;

  constructor(
    client: DynamoDBDocumentClient,
    tableName: string,
    private readonly random: Random = systemRandom,
  ) {
    this.items = new DynamoItems(client, tableName);
  }

  /** Folds the organization's days after its mark through the last closed day; the days that had usage. */
  async foldOrganization(organizationId: string, now: Date): Promise<string[]> {
    const through = closedThrough(now);
    const marked = await this.settledMark(organizationId, through);
    if (marked !== undefined && marked >= through) return [];
    const shards = await organizationShards(this.items, organizationId, nextDate(marked), through);
    const byDate = new Map<string, Record<string, unknown>[]>();
    for (const item of shards) {
      const date = item.date as string;
      if (marked !== undefined && date <= marked) continue;
      (byDate.get(date) ?? byDate.set(date, []).get(date)!).push(item);
    }
    const dates = [...byDate.keys()].sort();
    // An organization never folded has all of its days in what this fold reads: workspaces' totals count from the first.
    const countsFrom = marked === undefined ? FIRST_DATE : undefined;
    for (const date of dates) await this.foldDay(organizationId, date, sumRows(byDate.get(date)!), countsFrom);
    // Days without usage move the mark too: later views start after them.
    await this.mark(organizationId, through, countsFrom);
    return dates;
  }

  /**
   * The organization's fold mark once no key's totals hold a day after it. A mark after `through`
   * was set by a fold under a clock ahead of this one (a run under a moved clock, a clock that
   * stepped back since): the mark goes back to the day before `through`, which writes dated by
   * this clock may have reached since, remembering how far it reached (`reopenThrough`), and
   * each key's totals give back the days after it ({@link reopen}); those days are then read
   * from their shards and folded again once closed. A reopen cut short is finished by the next fold.
   */
  private async settledMark(organizationId: string, through: string): Promise<string | undefined> {
    for (let attempt = 0; attempt < MARK_ATTEMPTS; attempt++) {
      const item = await this.items.getItem(foldMarkKey(organizationId));
      const marked = item?.foldedThrough as string | undefined;
      let reopenThrough = item?.reopenThrough as string | undefined;
      let mark = marked;
      if (marked !== undefined && marked > through) {
        mark = daysBefore(new Date(`${through}T00:00:00Z`), 1);
        reopenThrough = reopenThrough !== undefined && reopenThrough > marked ? reopenThrough : marked;
        const { written } = await this.items.write({
          Update: {
            Key: foldMarkKey(organizationId),
            UpdateExpression: 'SET foldedThrough = :mark, reopenThrough = :reopen',
            ConditionExpression: 'foldedThrough = :marked',
            ExpressionAttributeValues: { ':mark': mark, ':reopen': reopenThrough, ':marked': marked },
          },
        });
        // Another fold moved the mark meanwhile: read it again.
        if (!written) continue;
      }
      if (reopenThrough !== undefined) await this.reopen(organizationId, mark!, reopenThrough);
      return mark;
    }
    throw new Error(`the fold mark of ${organizationId} kept moving; the next run folds it`);
  }

  /**
   * Gives back, from every key's and workspace's totals, the days after `mark` through
   * `reopenThrough`: each whose `foldedThrough` is after the mark takes off what its activity rows of those days hold,
   * its month and week recounted from the rows of the mark's month and week (a fold far ahead may
   * have dropped them), under the condition that its `foldedThrough` is what was read. Then the
   * mark forgets the reopen. Rows are left as they are: views read none after the mark, and the
   * next fold of each day writes them again.
   */
  private async reopen(organizationId: string, mark: string, reopenThrough: string): Promise<void> {
    const { month, week } = periodStarts(new Date(`${mark}T00:00:00Z`));
    const rows = await this.items.queryAll({
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
      ExpressionAttributeValues: { ':pk': activityPartition(organizationId), ':from': month < week ? month : week, ':to': `${reopenThrough}~` },
    });
    // Each key's totals, and each workspace's, with the rows they were folded from.
    const groups = new Map<string, { key: { pk: string; sk: string }; rows: Record<string, unknown>[] }>();
    const add = (key: { pk: string; sk: string }, row: Record<string, unknown>) => {
      const id = itemId(key.pk, key.sk);
      (groups.get(id) ?? groups.set(id, { key, rows: [] }).get(id)!).rows.push(row);
    };
    for (const row of rows) {
      add(totalsKey(row.keyHash as string), row);
      const workspaceId = countingWorkspace(row.workspaceId);
      if (workspaceId !== undefined) add(workspaceTotalsKey(organizationId, workspaceId), row);
    }
    const reopened = [...groups.values()].filter((group) => group.rows.some((row) => (row.date as string) > mark));
    const totals = await this.items.batchGet(reopened.map((group) => group.key));
    for (const { key, rows: folded } of reopened) {
      const item = totals.get(itemId(key.pk, key.sk));
      const through = item?.foldedThrough as string | undefined;
      if (item?.organizationId !== organizationId || through === undefined || through <= mark) continue;
      await this.giveBack(key, folded, mark, through);
    }
    await this.items.write({
      Update: { Key: foldMarkKey(organizationId), UpdateExpression: 'REMOVE reopenThrough', ConditionExpression: 'reopenThrough = :reopen', ExpressionAttributeValues: { ':reopen': reopenThrough } },
    });
  }

  /** Running totals (`key`) folded through `folded` given back to `mark`: what `rows` hold after it taken off, the month and week recounted from them. */
  private async giveBack(key: { pk: string; sk: string }, rows: readonly Record<string, unknown>[], mark: string, folded: string): Promise<void> {
    const { month, week } = periodStarts(new Date(`${mark}T00:00:00Z`));
    const costOf = (from: string, to: string) => addDecimals(rows.filter((row) => (row.date as string) >= from && (row.date as string) <= to).map((row) => decimal(row.cost)));
    const given = rows.filter((row) => (row.date as string) > mark && (row.date as string) <= folded).map((row) => row.date as string);
    const kept = [monthAttribute(mark), weekAttribute(week)];
    const dropped = [...new Set(given.flatMap((date) => [monthAttribute(date), weekAttribute(mondayOf(date))]))].filter((name) => !kept.includes(name));
    await this.items.write({
      Update: {
        Key: key,
        UpdateExpression: `SET #folded = :mark, #month = :month, #week = :week ADD #all :back${dropped.length > 0 ? ` REMOVE ${dropped.map((_, i) => `#d${i}`).join(', ')}` : ''}`,
        ConditionExpression: '#folded = :folded',
        ExpressionAttributeNames: { '#folded': 'foldedThrough', '#all': 'all', '#month': kept[0]!, '#week': kept[1]!, ...Object.fromEntries(dropped.map((name, i) => [`#d${i}`, name])) },
        ExpressionAttributeValues: {
          ':mark': mark,
          ':folded': folded,
          ':month': NumberValue.from(costOf(month, mark)),
          ':week': NumberValue.from(costOf(week, mark)),
          ':back': NumberValue.from(negate(costOf(nextDate(mark)!, folded))),
        },
      },
    });
  }

  private async foldDay(organizationId: string, date: string, rows: readonly SummedRow[], countsFrom: string | undefined): Promise<void> {
    const partition = activityPartition(organizationId);
    await this.items.batchWrite(
      rows.map((row): BatchWrite => ({ PutRequest: { Item: { pk: partition, sk: `${row.date}#${row.keyHash}#${row.model}#${row.endpointId.slice(row.model.length + 1)}`, ...rowItem(row) } } })),
    );
    for (const [keyHash, cost] of costsBy(rows, (row) => row.keyHash)) await this.addToTotals(organizationId, totalsKey(keyHash), date, cost);
    const workspaces = costsBy(rows, (row) => countingWorkspace(row.workspaceId));
    for (const [workspaceId, cost] of workspaces) await this.addToTotals(organizationId, workspaceTotalsKey(organizationId, workspaceId), date, cost);
    const models: Record<string, { requests: number; tokens: number }> = {};
    for (const row of rows) {
      const model = (models[row.model] ??= { requests: 0, tokens: 0 });
      model.requests += row.requests;
      model.tokens += row.promptTokens + row.completionTokens;
    }
    await this.items.batchWrite([{ PutRequest: { Item: { pk: popularityDayPartition(date), sk: organizationId, models } } }]);
    // Usage an earlier release wrote carries no workspace: workspaces' totals count from the day after.
    if (rows.some((row) => row.workspaceId === undefined)) await this.countWorkspacesFrom(organizationId, nextDate(date)!);
    await this.mark(organizationId, date, countsFrom);
  }

  /** Moves the day from which the organization's workspace totals count (`workspacesFrom`) forward to `date`; never back. */
  private async countWorkspacesFrom(organizationId: string, date: string): Promise<void> {
    await this.items.write({
      Update: {
        Key: foldMarkKey(organizationId),
        UpdateExpression: 'SET workspacesFrom = :date',
        ConditionExpression: 'attribute_not_exists(workspacesFrom) OR workspacesFrom < :date',
        ExpressionAttributeValues: { ':date': date },
      },
    });
  }

  /** The day in a key's or a workspace's running totals, once: the condition makes a second fold of the day write nothing. */
  private async addToTotals(organizationId: string, key: { pk: string; sk: string }, date: string, cost: string): Promise<void> {
    const month = monthAttribute(date);
    const week = weekAttribute(mondayOf(date));
    // The totals keep the month and week a view may ask for, and the ones before them.
    const oldMonth = monthAttribute(`${monthsBefore(date, 2)}-01`);
    const oldWeek = weekAttribute(daysBefore(new Date(`${mondayOf(date)}T00:00:00Z`), 14));
    await this.items.write({
      Update: {
        Key: key,
        UpdateExpression: 'SET #folded = :date, #org = :org ADD #all :cost, #month :cost, #week :cost REMOVE #oldMonth, #oldWeek',
        ConditionExpression: 'attribute_not_exists(#folded) OR #folded < :date',
        ExpressionAttributeNames: { '#folded': 'foldedThrough', '#org': 'organizationId', '#all': 'all', '#month': month, '#week': week, '#oldMonth': oldMonth, '#oldWeek': oldWeek },
        ExpressionAttributeValues: { ':date': date, ':org': organizationId, ':cost': NumberValue.from(cost) },
      },
    });
  }

  /**
   * Moves the organization's fold mark forward to `date`; never back. The first mark this release
   * writes says from which day workspaces' totals count (`workspacesFrom`): `countsFrom`, else
   * `date`, the days before it folded without them.
   */
  private async mark(organizationId: string, date: string, countsFrom = date): Promise<void> {
    await this.items.write({
      Update: {
        Key: foldMarkKey(organizationId),
        UpdateExpression: 'SET foldedThrough = :date, workspacesFrom = if_not_exists(workspacesFrom, :from)',
        ConditionExpression: 'attribute_not_exists(foldedThrough) OR foldedThrough < :date',
        ExpressionAttributeValues: { ':date': date, ':from': countsFrom },
      },
    });
  }

  /**
   * The popularity figures of the {@link USAGE_SORT_DAYS} closed days up to `now`, summed over
   * every organization's folded days, written to each copy of the snapshot the catalog reads.
   */
  async buildPopularity(now: Date): Promise<ModelUsage> {
    const through = closedThrough(now);
    const dates = Array.from({ length: USAGE_SORT_DAYS }, (_, i) => daysBefore(new Date(`${through}T00:00:00Z`), i));
    const days = await Promise.all(dates.map((date) => this.items.queryAll({ KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': popularityDayPartition(date) } })));
    const models: Record<string, { requests: number; tokens: number }> = {};
    for (const contribution of days.flat()) {
      for (const [model, figures] of Object.entries((contribution.models ?? {}) as Record<string, { requests: number; tokens: number }>)) {
        const sum = (models[model] ??= { requests: 0, tokens: 0 });
        sum.requests += Number(figures.requests);
        sum.tokens += Number(figures.tokens);
      }
    }
    const snapshot = { models, through, builtAt: now.toISOString() };
    await this.items.batchWrite(
      Array.from({ length: POPULARITY_COPIES }, (_, copy): BatchWrite => ({ PutRequest: { Item: { ...popularityCopyKey(copy), ...snapshot } } })),
    );
    return new Map(Object.entries(models));
  }

  /** The popularity figures as one copy of the snapshot holds them, chosen at random; empty before the first build. */
  async popularity(): Promise<ModelUsage> {
    const copy = Math.min(POPULARITY_COPIES - 1, Math.floor(this.random() * POPULARITY_COPIES));
    const item = await this.items.getItem(popularityCopyKey(copy), { consistent: false });
    const models = (item?.models ?? {}) as Record<string, { requests: number; tokens: number }>;
    return new Map(Object.entries(models).map(([model, figures]) => [model, { requests: Number(figures.requests), tokens: Number(figures.tokens) }]));
  }
}

/**
 * Copies of the popularity snapshot: every catalog container reads one every few minutes, and
 * at 100,000 containers one item would take a third of a partition's reads.
 */
export const POPULARITY_COPIES = 8;

/** The workspace whose running totals count a row (none: a key of no workspace, or usage an earlier release wrote). */
function countingWorkspace(workspaceId: unknown): string | undefined {
  return typeof workspaceId === 'string' && workspaceId !== NO_WORKSPACE ? workspaceId : undefined;
}

/** Each group's rows' costs, summed exactly; rows of no group (undefined) left out. */
function costsBy(rows: readonly SummedRow[], group: (row: SummedRow) => string | undefined): Map<string, string> {
  const costs = new Map<string, string[]>();
  for (const row of rows) {
    const name = group(row);
    if (name !== undefined) (costs.get(name) ?? costs.set(name, []).get(name)!).push(row.usageExact);
  }
  return new Map([...costs].map(([name, values]) => [name, addDecimals(values)]));
}

/** Reads of the fold mark before a fold gives up on a mark other folds keep moving back. */
const MARK_ATTEMPTS = 3;

const popularityDayPartition = (date: string) => `POPULARITY_DAY#${date}`;
const popularityCopyKey = (copy: number) => ({ pk: `POPULARITY_SNAPSHOT#${copy}`, sk: 'SNAPSHOT' });

/** The month (`YYYY-MM`) `months` months before `date`'s. */
function monthsBefore(date: string, months: number): string {
  const [year, month] = date.split('-').map(Number);
  const at = new Date(Date.UTC(year!, month! - 1 - months, 1));
  return at.toISOString().slice(0, 7);
}

/** A folded row as stored: its figures, the cost exact. */
function rowItem(row: SummedRow): Record<string, unknown> {
  const { usage, usageExact, requestsViaApiKey, requestsViaPolicy, modelPermaslug, ...rest } = row;
  return {
    ...rest,
    permaslug: modelPermaslug,
    cost: NumberValue.from(usageExact),
    via_api_key: requestsViaApiKey,
    ...Object.fromEntries(Object.entries(requestsViaPolicy).map(([policy, count]) => [`via_policy_${policy}`, count])),
  };
}
