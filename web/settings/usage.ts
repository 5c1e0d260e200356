/**
 * The usage section of the settings page (docs/workload-identity.md#the-settings-page): spend
 * per UTC day by key or by model, and every key limit, guardrail budget and workspace budget
 * as spent and left, with when it resets (docs/limits.md). It reads the management API with
 * the page's management key, like the rest of the page, and changes nothing.
 */
import { ApiFailure, allKeys, api, messageOf } from './api';
import { h, replaceChildren, svg } from './dom';
import { spendChart, type Grouping } from './usage-chart';
import {
  CHARTED_KEYS,
  activityDates,
  formatUsd,
  guardrailBudgets,
  intervalName,
  keyLimitBars,
  keysToChart,
  resetText,
  spendByKey,
  spendByModel,
  workspaceBudgets,
  type ActivityItem,
  type GuardrailView,
  type KeyUsageView,
  type SpendBar,
  type WorkspaceBudgetView,
  type WorkspaceView,
} from './usage-model';

/** How many of the per-key and per-workspace requests are in flight at once. */
const CONCURRENT_REQUESTS = 4;

interface UsageData {
  now: Date;
  keys: KeyUsageView[];
  activity: ActivityItem[];
  charted: { key: KeyUsageView; rows: ActivityItem[] }[];
  guardrails: GuardrailView[];
  workspaces: WorkspaceView[];
  budgets: Map<string, WorkspaceBudgetView[]>;
}

/**
 * The section, which starts loading at once and keeps its figures and its grouping when the
 * page re-renders around it; **Refresh** reads everything again.
 */
export function usageSection(): HTMLElement {
  const body = h('div', { id: 'usage-body' });
  const view = { grouping: 'key' as Grouping, generation: 0 };
  const show = async () => {
    const generation = ++view.generation;
    replaceChildren(body, h('p', { role: 'status' }, 'Loading usage…'));
    try {
      const data = await loadUsage();
      // A later refresh owns the section now.
      if (generation === view.generation) replaceChildren(body, spendCard(data, view), ...capCards(data));
    } catch (error) {
      if (generation !== view.generation) return;
      replaceChildren(body, h('p', { class: 'form-error', role: 'alert', id: 'usage-error' }, `Cannot show usage: ${messageOf(error)}`), h('button', { type: 'button', onclick: () => void show() }, 'Try again'));
    }
  };
  void show();
  return h(
    'section',
    { 'aria-labelledby': 'usage-title', id: 'usage' },
    h('div', { class: 'section-head' }, h('h2', { id: 'usage-title' }, 'Usage'), h('button', { type: 'button', class: 'secondary small', id: 'usage-refresh', onclick: () => void show() }, 'Refresh')),
    h('p', {}, 'What the organization’s keys spent, in USD, and how much of each limit and budget is left. Days, weeks (from Monday) and months are UTC.'),
    body,
  );
}

/** Every key (disabled ones spend from budgets too), the activity, guardrails and workspaces; then per key and per workspace. */
async function loadUsage(): Promise<UsageData> {
  const now = new Date();
  const [keys, activity, guardrails, workspaces] = await Promise.all([
    allKeys<KeyUsageView>('include_management=true&include_disabled=true'),
    api<{ data: ActivityItem[] }>('GET', '/activity'),
    api<{ data: GuardrailView[] }>('GET', '/guardrails'),
    api<{ data: WorkspaceView[] }>('GET', '/workspaces'),
  ]);
  const [charted, budgets] = await Promise.all([
    inTurns(keysToChart(keys), async (key) => ({ key, rows: await unlessGone<ActivityItem>(`/activity?api_key_hash=${encodeURIComponent(key.hash)}`) })),
    inTurns(workspaces.data, async (workspace) => [workspace.id, await unlessGone<WorkspaceBudgetView>(`/workspaces/${encodeURIComponent(workspace.id)}/budgets`)] as const),
  ]);
  return { now, keys, activity: activity.data, charted, guardrails: guardrails.data, workspaces: workspaces.data, budgets: new Map(budgets) };
}

/** A list of a key or workspace deleted since the first reads: nothing (a deleted key's spend is then under “Other keys”). */
async function unlessGone<T>(path: string): Promise<T[]> {
  try {
    return (await api<{ data: T[] }>('GET', path)).data;
  } catch (error) {
    if (error instanceof ApiFailure && error.status === 404) return [];
    throw error;
  }
}

/** `run` over `items`, {@link CONCURRENT_REQUESTS} at a time, results in the items' order. */
async function inTurns<T, R>(items: readonly T[], run: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await run(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENT_REQUESTS, items.length) }, worker));
  return results;
}

// ---------------------------------------------------------------------------------------
// Spend per day

function spendCard(data: UsageData, view: { grouping: Grouping }): HTMLElement {
  const dates = activityDates(data.now);
  const spend = { key: spendByKey(data.activity, data.charted, dates), model: spendByModel(data.activity, dates) };
  const card = h('div', { class: 'card', id: 'usage-spend' }, h('h3', {}, 'Spend per day, last 30 days'));
  if (spend.model.series.length === 0) {
    card.append(h('p', { class: 'empty', id: 'usage-no-spend' }, 'No usage in the last 30 days: spend shows here once a key makes requests.'));
    return card;
  }
  const host = h('div', { id: 'usage-chart-host' });
  const draw = () =>
    replaceChildren(
      host,
      view.grouping === 'key'
        ? h('p', { class: 'hint', id: 'usage-key-note' }, `Each of the ${CHARTED_KEYS} keys with the most spend this month has its own colour; what the organization’s other keys spent, deleted keys included, is under “Other keys”.`)
        : null,
      spendChart(spend[view.grouping], view.grouping),
    );
  draw();
  card.append(groupingSwitch(view, draw), host);
  return card;
}

/** Two radio buttons: one chart grouped by key or by model. */
function groupingSwitch(view: { grouping: Grouping }, draw: () => void): HTMLElement {
  const choice = (grouping: Grouping, label: string) => {
    const input = h('input', { type: 'radio', name: 'usage-grouping', id: `usage-group-${grouping}`, value: grouping, checked: view.grouping === grouping });
    input.addEventListener('change', () => {
      view.grouping = grouping;
      draw();
    });
    return h('span', { class: 'checkbox-row' }, input, h('label', { for: input.id }, label));
  };
  return h('fieldset', { class: 'grouping', id: 'usage-grouping' }, h('legend', {}, 'Group by'), choice('key', 'Key'), choice('model', 'Model'));
}

// ---------------------------------------------------------------------------------------
// Limits and budgets

function capCards(data: UsageData): HTMLElement[] {
  const keyLimits = keyLimitBars(data.keys, data.now);
  const guardrails = guardrailBudgets(data.guardrails, data.keys, data.workspaces, data.now);
  const workspaces = workspaceBudgets(data.workspaces, data.budgets, data.keys, data.now);
  if (keyLimits.length === 0 && guardrails.length === 0 && workspaces.length === 0) {
    return [h('p', { class: 'card empty', id: 'usage-no-limits' }, 'No limits or budgets: no key has a limit, and no guardrail or workspace has a budget.')];
  }
  return [
    capCard('usage-key-limits', 'Key limits', keyLimits.length ? capList(keyLimits, 'key_limit') : h('p', { class: 'empty' }, 'No key has a limit.')),
    capCard(
      'usage-guardrail-budgets',
      'Guardrail budgets',
      ...(guardrails.length ? guardrails.map(({ guardrail, bars }) => guardrailGroup(guardrail, bars)) : [h('p', { class: 'empty' }, 'No guardrail has a budget.')]),
    ),
    capCard(
      'usage-workspace-budgets',
      'Workspace budgets',
      ...(workspaces.length
        ? workspaces.map(({ workspace, bars }) => h('div', { class: 'cap-group', 'data-workspace-id': workspace.id }, h('h4', {}, workspace.name), capList(bars, 'workspace_budget')))
        : [h('p', { class: 'empty' }, 'No workspace has a budget.')]),
    ),
  ];
}

function capCard(id: string, title: string, ...content: HTMLElement[]): HTMLElement {
  return h('div', { class: 'card', id }, h('h3', {}, title), ...content);
}

function guardrailGroup(guardrail: GuardrailView & { limit_usd: number }, bars: SpendBar[]): HTMLElement {
  return h(
    'div',
    { class: 'cap-group', 'data-guardrail-id': guardrail.id },
    h('h4', {}, guardrail.name),
    h('p', { class: 'hint' }, `${intervalName(guardrail.reset_interval)} budget of ${formatUsd(guardrail.limit_usd)} for each key it covers.`),
    bars.length ? capList(bars, 'guardrail_budget') : h('p', { class: 'empty' }, 'It covers no key yet: assign it to keys or to a workspace.'),
  );
}

type CapKind = 'key_limit' | 'guardrail_budget' | 'workspace_budget';

function capList(bars: SpendBar[], kind: CapKind): HTMLElement {
  return h('ul', { class: 'caps' }, ...bars.map((bar) => capItem(bar, kind)));
}

/** One cap: its name, a bar of spent and left, the amounts, and when it resets. */
function capItem(bar: SpendBar, kind: CapKind): HTMLElement {
  const spentOut = bar.left <= 0;
  const resets = resetText(bar.interval, bar.resetsAt);
  return h(
    'li',
    {
      class: `cap${spentOut ? ' spent-out' : ''}`,
      'data-kind': kind,
      'data-id': bar.id,
      'data-spent': bar.spent,
      'data-left': bar.left,
      'data-limit': bar.limit,
      'data-resets-at': bar.resetsAt?.toISOString() ?? 'never',
    },
    h('p', { class: 'cap-title' }, h('span', { class: 'cap-name' }, bar.title), kind === 'key_limit' ? ` · ${intervalName(bar.interval).toLowerCase()} limit` : null),
    meter(bar),
    h(
      'p',
      { class: 'cap-figures' },
      h('span', { class: 'cap-spent' }, `${formatUsd(bar.spent)} spent`),
      ' of ',
      h('span', { class: 'cap-limit' }, formatUsd(bar.limit)),
      ' · ',
      h('span', { class: 'cap-left' }, spentOut ? 'nothing left' : `${formatUsd(bar.left)} left`),
    ),
    h('p', { class: 'cap-reset' }, bar.resetsAt ? h('time', { datetime: bar.resetsAt.toISOString() }, resets) : resets),
  );
}

/** The bar: what is spent over what the cap allows; any spend is at least a sliver. */
function meter(bar: SpendBar): SVGSVGElement {
  const share = bar.limit > 0 ? Math.min(1, bar.spent / bar.limit) : 1;
  const width = bar.spent > 0 ? Math.max(0.5, share * 100) : 0;
  return svg(
    'svg',
    { class: 'meter', viewBox: '0 0 100 10', preserveAspectRatio: 'none', role: 'img', 'aria-label': `${formatUsd(bar.spent)} spent of ${formatUsd(bar.limit)}` },
    svg('rect', { class: 'meter-track', width: 100, height: 10 }),
    svg('rect', { class: 'meter-spent', width, height: 10 }),
  );
}
