import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hashApiKey } from '../../lambdas/accounts/api-keys';
import { utcDate } from '../../lambdas/usage/usage';
import { startLocalProcess, type LocalProcess } from '../support/local-process';

const MODELS = ['openai/gpt-4o-mini', 'deepseek/deepseek-v4-flash'];
const WORKERS = 24;
/** Killed once this many completions have been acknowledged, with the other workers' in flight. */
const ACKNOWLEDGED_BEFORE_KILL = 60;

/** Sends a completion; true when the whole answer arrived (JSON body, or a stream through `[DONE]`). */
async function complete(baseUrl: string, key: string, model: string, stream: boolean): Promise<boolean> {
  const response = await fetch(`${baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'one two three four' }], stream }),
  });
  const text = await response.text();
  if (response.status !== 200) return false;
  if (stream) return text.endsWith('data: [DONE]\n\n');
  try {
    return Array.isArray((JSON.parse(text) as { choices?: unknown }).choices);
  } catch {
    return false;
  }
}

/**
 * `kill -9` of `npm start` while completions are in flight, then a start on the
 * same data. A completion's usage is one item written before its answer completes, and every
 * view is summed from those items: the key's all-time and daily usage (`GET /key`,
 * `GET /keys/{hash}`, `GET /keys`) and `GET /activity` agree, and every completion the client
 * received in full is counted.
 */
describe('usage after kill -9 under load of completions', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'modelgate-usage-crash-'));
  let service: LocalProcess | undefined;
  afterAll(async () => {
    await service?.killHard();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('counts every acknowledged completion, and every view of the key agrees after the restart', async () => {
    service = await startLocalProcess(dataDir);
    const { baseUrl, keys } = service;
    const acknowledged = new Map(MODELS.map((model) => [model, 0]));
    let sent = 0;
    let killed: Promise<void> | undefined;
    const killNow = () => (killed ??= service!.killHard());
    const worker = async (index: number) => {
      for (let round = 0; !killed; round++) {
        const model = MODELS[(index + round) % MODELS.length]!;
        sent++;
        const ok = await complete(baseUrl, keys.workspace, model, (index + round) % 2 === 0).catch(() => false);
        if (!ok) continue;
        acknowledged.set(model, acknowledged.get(model)! + 1);
        // The kill lands right after an acknowledgement, while other answers are in flight.
        if ([...acknowledged.values()].reduce((a, b) => a + b) >= ACKNOWLEDGED_BEFORE_KILL) void killNow();
      }
    };
    await Promise.all(Array.from({ length: WORKERS }, (_, i) => worker(i)));
    await killed;

    service = await startLocalProcess(dataDir);
    const hash = hashApiKey(keys.workspace);
    const read = async (path: string, key = keys.managementReadOnly) => {
      const response = await fetch(`${service!.baseUrl}${path}`, { headers: { Authorization: `Bearer ${key}` } });
      expect(response.status).toBe(200);
      return (await response.json()) as any;
    };
    type ActivityRow = { date: string; model: string; requests: number; usage: number };
    const [current, byHash, listed, activity] = await Promise.all([
      read('/key', keys.workspace),
      read(`/keys/${hash}`),
      read('/keys'),
      read(`/activity?api_key_hash=${hash}`),
    ]);
    const rows = activity.data as ActivityRow[];
    const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
    const today = utcDate(new Date());
    const counted = Object.fromEntries(MODELS.map((model) => [model, sum(rows.filter((row) => row.model === model).map((row) => row.requests))]));
    const figures = {
      sent,
      acknowledged: Object.fromEntries(acknowledged),
      counted,
      usage: current.data.usage,
      usageDaily: current.data.usage_daily,
      activityUsage: sum(rows.map((row) => row.usage)),
    };
    if (process.env.MODELGATE_CRASH_FIGURES) process.stdout.write(`usage crash figures: ${JSON.stringify(figures)}\n`);

    // No completion the client received in full is missing, and nothing beyond what was sent is there.
    for (const model of MODELS) {
      expect({ model, counted: counted[model]! >= acknowledged.get(model)! }).toEqual({ model, counted: true });
    }
    expect(sum(Object.values(counted))).toBeLessThanOrEqual(sent);
    // Every view is the same sum.
    const allTime = figures.activityUsage;
    expect(allTime).toBeGreaterThan(0);
    expect(current.data.usage).toBeCloseTo(allTime, 12);
    expect(byHash.data.usage).toBeCloseTo(allTime, 12);
    expect(listed.data.find((key: { hash: string }) => key.hash === hash).usage).toBeCloseTo(allTime, 12);
    expect(current.data.usage_daily).toBeCloseTo(sum(rows.filter((row) => row.date === today).map((row) => row.usage)), 12);
    expect(current.data.usage_monthly).toBeCloseTo(sum(rows.filter((row) => row.date.slice(0, 7) === today.slice(0, 7)).map((row) => row.usage)), 12);
  }, 180_000);
});
