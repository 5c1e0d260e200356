import type { Principal } from '../accounts/types';
import { VARIABLE_PRICE, effectivePricing } from '../catalog/pricing';
import { addDecimals, multiplyDecimal } from '../decimal';
import type { ProviderEndpoint, PublicModel } from '../catalog/types';

/**
 * Usage attribution (docs/reference.md#keys-and-credentials): every completed inference request counts against the API key
 * it acted as, whether the key itself or an access token issued for it made the call.
 */

/** One completed request, as the usage store records it. */
export interface UsageRecord {
  organizationId: string;
  /** The acting key: the key itself, or the key a federation policy's token acts as. */
  keyHash: string;
  /** The acting key's workspace (null: none, a management key): its budgets count the completion, whatever becomes of the key. */
  workspaceId: string | null;
  model: PublicModel;
  endpoint: ProviderEndpoint;
  promptTokens: number;
  completionTokens: number;
  /** USD, exact decimal, from the endpoint's pricing at the request instant (docs/reference.md#pricing-and-cost). */
  cost: string;
  /** What of {@link cost} the prompt and the completion tokens cost: the answer's `usage.cost_details`. */
  costParts: { prompt: string; completion: string };
  /** UTC date of the request instant, `YYYY-MM-DD`. */
  date: string;
  /** `api_key`, or the federation policy whose token made the call. */
  via: { credential: 'api_key' } | { credential: 'access_token'; policyId: string | null };
  /**
   * `maximum` when the provider reported no usage after it began to answer (it failed, or its
   * answer broke off): the completion was charged the most it could cost (docs/limits.md, "Leaving early and failures").
   */
  charge?: 'maximum';
}

/** A usage record as the usage store writes it: the model and endpoint by what a usage item names of them. */
export type KeptUsage = Omit<UsageRecord, 'model' | 'endpoint'> & {
  model: Pick<PublicModel, 'id' | 'canonical_slug'>;
  endpoint: Pick<ProviderEndpoint, 'tag' | 'provider_name'>;
};

/** USD spent by one key: all time and in the current UTC day, week (from Monday) and month. */
export interface KeyUsage {
  usage: number;
  daily: number;
  weekly: number;
  monthly: number;
}

/** A key that spent nothing. */
export const NO_USAGE: KeyUsage = Object.freeze({ usage: 0, daily: 0, weekly: 0, monthly: 0 });

/** One row of the activity listing: a day, a model and the endpoint that served it. */
export interface ActivityRow {
  date: string;
  model: string;
  modelPermaslug: string;
  endpointId: string;
  providerName: string;
  keyHash: string;
  requests: number;
  promptTokens: number;
  completionTokens: number;
  usage: number;
  /** Requests made with the key itself, and with access tokens by federation policy. */
  requestsViaApiKey: number;
  requestsViaPolicy: Record<string, number>;
}

/** docs/reference.md#listing-rules rule 2: `top-weekly` counts the last week; `most-popular` the same window. */
export const USAGE_SORT_DAYS = 7;

/** How often a deployed function reads the gateway's usage figures for the catalog sorts. */
export const USAGE_FIGURES_SECONDS = 300;

/** Where usage is counted and read: the usage table in AWS (lambdas/aws/dynamo-usage-store.ts; docs/architecture.md, "Usage over time"). */
export interface UsageStore {
  /**
   * Adds one request to the key's counters in one atomic single-item write (DynamoDB `ADD`s):
   * concurrent requests lose nothing, a crash leaves the request counted whole or not at all,
   * and every usage view (all time, day, week, month, activity) is summed from these counters.
   * Resolves once the write is durable: the caller acknowledges the completion only then.
   */
  record(record: KeptUsage): Promise<void>;
  /**
   * Usage of these keys of the organization, at `now`. Keys without usage are absent. `known`:
   * the organization's fold mark, read before ({@link foldMark}), which saves a round trip.
   */
  keyUsage(organizationId: string, keyHashes: readonly string[], now: Date, known?: { foldedThrough: string | undefined }): Promise<Map<string, KeyUsage>>;
  /**
   * What the workspace's keys spent, deleted keys included, at `now`, counted from its own running
   * totals and the usage after them: undefined when that cannot count every day from `since`
   * (the totals began later, or usage an earlier release recorded without its workspace is not
   * folded yet), and then the caller sums its keys' usage instead.
   */
  workspaceUsage(organizationId: string, workspaceId: string, now: Date, since: string): Promise<KeyUsage | undefined>;
  /** The day through which the organization's usage is folded. */
  foldMark(organizationId: string): Promise<{ foldedThrough: string | undefined }>;
  /** Activity rows of the organization from `from` to `to` (UTC dates, inclusive). */
  activity(organizationId: string, from: string, to: string): Promise<ActivityRow[]>;
}

/**
 * How long after a UTC day ends its usage may still be written: a completion is dated at its
 * start and recorded when it ends, within the inference function's timeout.
 */
export const FOLD_GRACE_MS = 30 * 60 * 1000;

/** The last UTC day whose usage is complete at `now`: a fold folds no later day. */
export function closedThrough(now: Date): string {
  return daysBefore(new Date(now.getTime() - FOLD_GRACE_MS), 1);
}

/** A date before every date a usage item holds (`YYYY-MM-DD`): where all time starts. */
export const FIRST_DATE = '0000-01-01';

/** The UTC date after `date` (`YYYY-MM-DD`); undefined for none. */
export function nextDate(date: string | undefined): string | undefined {
  if (date === undefined) return undefined;
  const [year, month, day] = date.split('-').map(Number);
  return utcDate(new Date(Date.UTC(year!, month! - 1, day! + 1)));
}

/** The Monday of the UTC week `date` (`YYYY-MM-DD`) lies in. */
export function mondayOf(date: string): string {
  return periodStarts(new Date(`${date}T00:00:00Z`)).week;
}

/**
 * What a request cost (docs/reference.md#pricing-and-cost): the effective prompt and completion prices for its
 * prompt size at its instant, overrides and discount applied, plus the per-request price.
 * A router's variable price ("-1") is not known here and counts as zero.
 */
export function requestCost(endpoint: ProviderEndpoint, promptTokens: number, completionTokens: number, at: Date): string {
  return requestCharge(endpoint, { promptTokens, completionTokens }, at).cost;
}

/** The tokens of one request as priced: every prompt token, and of them those read from and written to a cache. */
export interface PricedTokens {
  promptTokens: number;
  completionTokens: number;
  cachedTokens?: number;
  cacheWriteTokens?: number;
}

/**
 * {@link requestCost}, and what of it the prompt and the completion tokens cost. Prompt tokens
 * read from a cache are priced at `input_cache_read`, those written to one at
 * `input_cache_write`, each at the prompt price where the endpoint publishes none.
 */
export function requestCharge(endpoint: ProviderEndpoint, tokens: PricedTokens, at: Date): Pick<UsageRecord, 'cost' | 'costParts'> {
  const { promptTokens, completionTokens } = tokens;
  const cached = tokens.cachedTokens ?? 0;
  const written = tokens.cacheWriteTokens ?? 0;
  const price = effectivePricing(endpoint.pricing, { promptTokens, at });
  const known = (value: string | undefined) => (value === undefined || value === VARIABLE_PRICE ? '0' : value);
  const promptPrice = known(price.prompt);
  const prompt = addDecimals([
    multiplyDecimal(promptPrice, String(promptTokens - cached - written)),
    multiplyDecimal(price.input_cache_read === undefined ? promptPrice : known(price.input_cache_read), String(cached)),
    multiplyDecimal(price.input_cache_write === undefined ? promptPrice : known(price.input_cache_write), String(written)),
  ]);
  const completion = multiplyDecimal(known(price.completion), String(completionTokens));
  return { cost: addDecimals([prompt, completion, known(price.request)]), costParts: { prompt, completion } };
}

/** The usage record of one completion: the acting key, the model and endpoint, the tokens and their cost, and the credential that made it. */
export function usageRecord(input: {
  principal: Principal;
  model: PublicModel;
  endpoint: ProviderEndpoint;
  promptTokens: number;
  completionTokens: number;
  cachedTokens?: number;
  cacheWriteTokens?: number;
  at: Date;
}): UsageRecord {
  const { principal } = input;
  return {
    organizationId: principal.organization.id,
    keyHash: principal.key.hash,
    workspaceId: principal.key.workspaceId ?? null,
    model: input.model,
    endpoint: input.endpoint,
    promptTokens: input.promptTokens,
    completionTokens: input.completionTokens,
    ...requestCharge(input.endpoint, input, input.at),
    date: utcDate(input.at),
    via:
      principal.credential === 'api_key'
        ? { credential: 'api_key' }
        : { credential: 'access_token', policyId: principal.federationPolicyId ?? null },
  };
}

/** The UTC date of an instant, `YYYY-MM-DD`. */
export function utcDate(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/** First days of the current UTC week (Monday) and month, as `YYYY-MM-DD`. */
export function periodStarts(now: Date): { day: string; week: string; month: string } {
  const day = utcDate(now);
  const sinceMonday = (now.getUTCDay() + 6) % 7;
  const week = utcDate(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - sinceMonday)));
  return { day, week, month: `${day.slice(0, 8)}01` };
}

/** The UTC date `days` days before `now`'s. */
export function daysBefore(now: Date, days: number): string {
  return utcDate(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - days)));
}

/** An endpoint's id in activity rows: stable across catalog imports (model and provider tag). */
export function endpointId(model: Pick<PublicModel, 'id'>, endpoint: Pick<ProviderEndpoint, 'tag'>): string {
  return `${model.id}:${endpoint.tag}`;
}
