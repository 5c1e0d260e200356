import type { FunctionId } from '../../lambdas/routes';
import type { AwsCall } from '../../local/aws-calls';
import type { ScaleLoad } from '../../local/scale-model';
import type { BackgroundReads, BudgetUpkeep } from './scale-scenarios';

/** The rows of the scale model, as docs/benchmarks.md ("Scale") lists them. */
export type TrafficRowId =
  | 'key-completions'
  | 'limited-key-completions'
  | 'token-completions'
  | 'key-catalog'
  | 'organization-completions'
  | 'limited-workspace-completions'
  | 'model-completions'
  | 'policy-exchanges'
  | 'address-exchanges'
  | 'jwks'
  | 'key-usage'
  | 'organization-activity'
  | 'key-usage-day-365'
  | 'organization-activity-day-365';

/** One row of traffic: what it sends, at what rate, on which route and function. */
export interface TrafficRow {
  id: TrafficRowId;
  /** What the row sends, as the docs table names it. */
  traffic: string;
  /** Requests per second the row is scaled to; none for a row measured for its cost only. */
  rate?: number;
  /** The route its requests take, and the function that serves it, for the cost table. */
  route: string;
  functionName: FunctionId;
}

/** The rows the scale model holds to DynamoDB's limits. */
export const TRAFFIC_ROWS: readonly (TrafficRow & { rate: number })[] = [
  { id: 'key-completions', traffic: 'one workspace key, completions on one model', rate: 10_000, route: 'POST /chat/completions (API key)', functionName: 'inference' },
  {
    id: 'limited-key-completions',
    traffic: 'one key with a monthly limit and a guardrail\'s daily budget (the guardrail as large as one may be), completions on one model',
    rate: 10_000,
    route: 'POST /chat/completions (API key, limits)',
    functionName: 'inference',
  },
  { id: 'token-completions', traffic: 'one access token, completions on one model', rate: 10_000, route: 'POST /chat/completions (access token)', functionName: 'inference' },
  { id: 'key-catalog', traffic: 'catalog from one key', rate: 10_000, route: 'GET /models/user', functionName: 'catalog' },
  { id: 'organization-completions', traffic: 'one organization, completions over many keys', rate: 50_000, route: 'POST /chat/completions (API key)', functionName: 'inference' },
  {
    id: 'limited-workspace-completions',
    traffic: 'one workspace with a monthly budget, completions over many keys each with a limit',
    rate: 50_000,
    route: 'POST /chat/completions (API key, limits)',
    functionName: 'inference',
  },
  { id: 'model-completions', traffic: 'one model, completions across the deployment', rate: 50_000, route: 'POST /chat/completions (API key)', functionName: 'inference' },
  { id: 'policy-exchanges', traffic: 'one policy, token exchanges', rate: 300, route: 'POST /oauth/token', functionName: 'tokenExchange' },
  // A NAT's worth of workloads behind one address, for the 30 s or so before the firewall's rate rule blocks it.
  { id: 'address-exchanges', traffic: 'one address, token exchanges past its limit', rate: 10_000, route: 'POST /oauth/token', functionName: 'tokenExchange' },
  { id: 'jwks', traffic: 'the key set, fetched by every verifier', rate: 10_000, route: 'GET /oauth/jwks', functionName: 'jwks' },
];

/** Rows measured for what they cost only: the usage views, on the first day and after a year of history, folded. */
export const COST_ROWS: readonly TrafficRow[] = [
  { id: 'key-usage', traffic: 'a key\'s own usage', route: 'GET /key', functionName: 'management' },
  { id: 'organization-activity', traffic: 'an organization\'s activity', route: 'GET /activity', functionName: 'management' },
  { id: 'key-usage-day-365', traffic: 'a key\'s own usage, a year of 20 models a day on', route: 'GET /key', functionName: 'management' },
  { id: 'organization-activity-day-365', traffic: 'an organization\'s activity, a year on', route: 'GET /activity', functionName: 'management' },
];

/** A row as measured: its requests' AWS calls, times and answer sizes, and its load at its rate. */
export interface MeasuredRow extends TrafficRow {
  /** How many requests were measured. */
  requests: number;
  /** Every AWS call they made, the calls made after an answer ended included. */
  calls: AwsCall[];
  /** The same, request by request. */
  callsPerRequest: AwsCall[][];
  /** Each request's time on the local runtime, to the end of its invocation, ms. */
  localMs: number[];
  /** The bytes of each answer's body as API Gateway sends it: gzipped from its minimum compression size (1 KiB) on. */
  answerBytes: number[];
  /** At the row's rate, its containers' own reads included; none for a cost-only row. */
  load?: ScaleLoad;
  /** The spending limits its requests meet: what keeps each one's ledger (scale-scenarios.ts). */
  budgets?: BudgetUpkeep[];
  /** How long its completions last, when not the model's 2 s (scale-scenarios.ts, `atCompletionSeconds`). */
  completionSeconds?: number;
}

/** How many requests a scale run sends, and which rows it runs. */
export interface ScaleRunOptions {
  /**
   * Requests per row, or per row as a function of it: a multiple of the largest count of copies or
   * shards its requests spread over spreads them exactly (256 covers every row). @default 512
   */
  requests?: number | ((row: TrafficRow) => number);
  /** Token exchanges in the policy row (each from its own address). @default 128 */
  exchanges?: number;
  /**
   * Keys of the organization row, and of the model row (over five organizations), taken in turn.
   * An odd number, so that each key's own draws, too, take its copies in turn (see equidistributed-draws.ts). @default 17
   */
  keys?: number;
  /** Requests of each cost-only row. @default 16 */
  costRequests?: number;
  /** Rows to run. @default every row of {@link TRAFFIC_ROWS} and {@link COST_ROWS} */
  rows?: readonly TrafficRowId[];
}

/** What a scale run measured: each row, and what each container reads on its own. */
export interface MeasuredScale {
  rows: MeasuredRow[];
  background: BackgroundReads;
}
