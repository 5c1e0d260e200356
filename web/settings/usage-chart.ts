/**
 * The spend chart of the usage section: stacked bars per UTC day drawn as SVG elements built
 * one by one (dom.ts), a legend, and the same figures as a table. Names of keys and models are
 * text nodes (legend, table, the bars' tooltips); the chart has no other text from data.
 */
import { append, h, svg } from './dom';
import { formatUsd, niceCeiling, type DailySpend, type Series } from './usage-model';

/** What the chart's bars are stacked by: API key or model. */
export type Grouping = 'key' | 'model';

/** The drawing's own units (viewBox): the stylesheet scales it to the card's width. */
const WIDTH = 720;
const HEIGHT = 240;
const PLOT = { left: 76, top: 12, right: 8, bottom: 28 };

interface Frame {
  x: number;
  y: number;
  width: number;
  height: number;
  /** USD at the top of the scale. */
  top: number;
}

/** The chart, its legend and its figures; `spend` must have some spend in it (the section says when there is none). */
export function spendChart(spend: DailySpend, grouping: Grouping): HTMLElement {
  return h(
    'figure',
    { class: 'usage-chart', id: 'usage-chart', 'data-grouping': grouping },
    h('div', { class: 'chart-scroll' }, chartDrawing(spend, grouping)),
    legend(spend),
    h('p', { class: 'usage-total', id: 'usage-total' }, 'Total over the period: ', h('strong', {}, formatUsd(sum([...spend.totals.values()])))),
    figuresTable(spend, grouping),
  );
}

function chartDrawing(spend: DailySpend, grouping: Grouping): SVGSVGElement {
  const frame: Frame = {
    x: PLOT.left,
    y: PLOT.top,
    width: WIDTH - PLOT.left - PLOT.right,
    height: HEIGHT - PLOT.top - PLOT.bottom,
    top: niceCeiling(Math.max(0, ...spend.totals.values())),
  };
  const title = `Spend per UTC day by ${grouping}, ${spend.dates[0]} to ${spend.dates[spend.dates.length - 1]}`;
  const drawing = svg('svg', { class: 'chart', viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: 'img', 'aria-label': `${title} (the figures are in the table below)` });
  append(drawing, svg('title', {}, title), ...scale(frame));
  spend.dates.forEach((date, index) => append(drawing, ...dayBars(spend, date, index, frame)));
  append(drawing, ...dateLabels(spend.dates, frame));
  return drawing;
}

/** Grid lines at nothing, half the scale and the top, each with its amount. */
function scale(frame: Frame): SVGElement[] {
  return [0, frame.top / 2, frame.top].flatMap((amount) => {
    const y = frame.y + frame.height - (amount / frame.top) * frame.height;
    return [
      svg('line', { class: 'grid', x1: frame.x, x2: frame.x + frame.width, y1: y, y2: y }),
      svg('text', { class: 'axis', x: frame.x - 6, y: y + 4, 'text-anchor': 'end' }, formatUsd(amount)),
    ];
  });
}

/** One day's stack, largest series at the bottom; a series with any spend is at least a pixel high. */
function dayBars(spend: DailySpend, date: string, index: number, frame: Frame): SVGElement[] {
  const slot = frame.width / spend.dates.length;
  let bottom = frame.y + frame.height;
  const bars: SVGElement[] = [];
  spend.series.forEach((entry, position) => {
    const amount = entry.perDay.get(date);
    if (!amount) return;
    const height = Math.max(1, (amount / frame.top) * frame.height);
    bottom -= height;
    bars.push(
      svg(
        'rect',
        { class: `bar ${seriesClass(entry, position)}`, x: frame.x + index * slot + slot * 0.15, y: bottom, width: slot * 0.7, height, 'data-date': date, 'data-series': entry.id, 'data-usd': amount },
        svg('title', {}, `${date} · ${entry.name}: ${formatUsd(amount)}`),
      ),
    );
  });
  return bars;
}

/** Today's date and every seventh day before it, as MM-DD. */
function dateLabels(dates: string[], frame: Frame): SVGElement[] {
  const slot = frame.width / dates.length;
  return dates.flatMap((date, index) =>
    (dates.length - 1 - index) % 7 === 0 ? [svg('text', { class: 'axis', x: frame.x + (index + 0.5) * slot, y: HEIGHT - 8, 'text-anchor': 'middle' }, date.slice(5))] : [],
  );
}

/** The stylesheet's colour of a series: ten of them, then grey for the rest. */
function seriesClass(entry: Series, position: number): string {
  return entry.other ? 'series-other' : `series-${position % 10}`;
}

function legend(spend: DailySpend): HTMLElement {
  const list = h('ul', { class: 'legend', id: 'usage-legend', 'aria-label': 'Legend' });
  spend.series.forEach((entry, position) => {
    append(
      list,
      h(
        'li',
        { 'data-series': entry.id },
        svg('svg', { class: 'swatch', viewBox: '0 0 10 10', 'aria-hidden': 'true' }, svg('rect', { class: seriesClass(entry, position), width: 10, height: 10 })),
        seriesName(entry),
        ' ',
        h('span', { class: 'series-total', 'data-usd': entry.total }, formatUsd(entry.total)),
      ),
    );
  });
  return list;
}

function seriesName(entry: Series): HTMLElement {
  return h('span', { class: 'series' }, h('span', { class: 'series-name' }, entry.name), entry.detail ? h('span', { class: 'series-detail' }, ` ${entry.detail}`) : null);
}

/** Every amount of the chart, newest day first: what a screen reader reads, and what the tooltips say. */
function figuresTable(spend: DailySpend, grouping: Grouping): HTMLElement {
  const body = h('tbody');
  for (const date of [...spend.dates].reverse()) {
    for (const entry of spend.series) {
      const amount = entry.perDay.get(date);
      if (!amount) continue;
      append(body, h('tr', { 'data-date': date, 'data-series': entry.id }, h('td', {}, date), h('td', {}, seriesName(entry)), h('td', { class: 'usd', 'data-usd': amount }, formatUsd(amount))));
    }
  }
  const table = h(
    'table',
    { id: 'usage-table' },
    h('thead', {}, h('tr', {}, ...['Date (UTC)', grouping === 'key' ? 'Key' : 'Model', 'Spend'].map((title) => h('th', { scope: 'col' }, title)))),
    body,
  );
  return h('details', { class: 'usage-figures' }, h('summary', {}, 'The figures, day by day'), h('div', { class: 'table-scroll' }, table));
}

function sum(amounts: number[]): number {
  return amounts.reduce((total, amount) => total + amount, 0);
}
