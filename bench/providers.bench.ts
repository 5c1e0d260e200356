/**
 * Benchmark of the provider APIs' translation (`npm run bench`, docs/benchmarks.md#provider-apis):
 *
 * 1. Per request, in process: a chat request of a system message, ten turns and two tools made
 *    into Anthropic's Messages body and Bedrock's Converse input, against the pass-through (the
 *    body OpenAI is sent, the allowlist applied) in the same run.
 * 2. Per streamed chunk, in process: an Anthropic event stream of 2,000 text deltas read through
 *    the translation (the public chunks the relay reads), against reading the same number of
 *    public chunks as an OpenAI upstream sends them.
 * 3. End to end: the local runtime in front of the OpenAI and Anthropic stand-ins, streamed
 *    completions timed by a client: time to the last byte through each, and the difference.
 */
import { anthropicBody, anthropicStreamEvents } from '../lambdas/providers/anthropic';
import { converseInput } from '../lambdas/aws/bedrock-converse';
import { chatCallOf } from '../lambdas/providers/chat-call';
import { chatResponse } from '../lambdas/providers/chat-answer';
import { openAiBody } from '../lambdas/providers/openai';
import { quietSdkNodeNotice } from '../local/sdk-node-notice';
import { CLAUDE, GPT, startProviderApis } from '../test/support/provider-apis';

const weather = { type: 'function', function: { name: 'weather', description: 'Weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } } } } };
const turns = Array.from({ length: 10 }, (_, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content: `Turn ${i}: ${'a few words of conversation '.repeat(8)}` }));
const body = { model: CLAUDE, messages: [{ role: 'system', content: 'Be brief.' }, ...turns], tools: [weather, { ...weather, function: { ...weather.function, name: 'time' } }], max_tokens: 500, temperature: 0.2, stream: true };

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** Median µs per call of each row over 9 runs of `iterations` calls, rows in turn so load falls on all alike. */
async function perCall<Row extends string>(rows: Record<Row, () => unknown>, iterations: number): Promise<Record<Row, number>> {
  const entries = Object.entries(rows) as [Row, () => unknown][];
  const runs = new Map<Row, number[]>(entries.map(([row]) => [row, []]));
  for (let run = 0; run < 10; run++) {
    for (const [row, fn] of entries) {
      const started = performance.now();
      for (let i = 0; i < iterations; i++) await fn();
      if (run > 0) runs.get(row)!.push(((performance.now() - started) * 1000) / iterations);
    }
  }
  return Object.fromEntries(entries.map(([row]) => [row, median(runs.get(row)!)])) as Record<Row, number>;
}

const encoder = new TextEncoder();
/** A response whose body is `text` in chunks of about 1 KB, as a provider's stream arrives. */
function streamOf(text: string): Response {
  const bytes = encoder.encode(text);
  let offset = 0;
  return new Response(new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset >= bytes.length) return controller.close();
      controller.enqueue(bytes.subarray(offset, (offset += 1024)));
    },
  }));
}

const DELTAS = 2000;
const anthropicText = [
  `event: message_start\ndata: ${JSON.stringify({ type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], usage: { input_tokens: 40, output_tokens: 1 } } })}\n\n`,
  `event: content_block_start\ndata: ${JSON.stringify({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } })}\n\n`,
  ...Array.from({ length: DELTAS }, (_, i) => `event: content_block_delta\ndata: ${JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: `word${i} ` } })}\n\n`),
  `event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n`,
  `event: message_delta\ndata: ${JSON.stringify({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: DELTAS } })}\n\n`,
  'event: message_stop\ndata: {"type":"message_stop"}\n\n',
].join('');
const openAiText = [
  ...Array.from({ length: DELTAS }, (_, i) => `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: `word${i} ` }, finish_reason: null }] })}\n\n`),
  'data: [DONE]\n\n',
].join('');

async function readAll(response: Response): Promise<number> {
  return (await response.text()).length;
}

async function endToEnd(): Promise<Record<'OpenAI API (pass-through)' | 'Anthropic API (translated)', { median: number; p90: number }>> {
  const apis = await startProviderApis({ logLevel: 'ERROR', persist: false });
  try {
    const time = async (model: string, provider: string) => {
      const started = performance.now();
      const answer = await fetch(`${apis.service.runtime.baseUrl}/chat/completions`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${apis.service.runtime.demo.keys.workspace}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ model, messages: [{ role: 'user', content: 'one two three four five six seven eight' }], stream: true, provider: { only: [provider] } }),
      });
      await answer.text();
      return performance.now() - started;
    };
    const rows = { 'OpenAI API (pass-through)': [GPT, 'openai'], 'Anthropic API (translated)': [CLAUDE, 'anthropic'] } as const;
    const timings = new Map<string, number[]>(Object.keys(rows).map((row) => [row, []]));
    for (let i = 0; i < 30; i++) for (const [model, provider] of Object.values(rows)) await time(model, provider);
    for (let i = 0; i < 300; i++) for (const [row, [model, provider]] of Object.entries(rows)) timings.get(row)!.push(await time(model, provider));
    const stat = (values: number[]) => ({ median: median(values), p90: [...values].sort((a, b) => a - b)[Math.floor(values.length * 0.9)]! });
    return Object.fromEntries([...timings].map(([row, values]) => [row, stat(values)])) as never;
  } finally {
    await apis.stop();
  }
}

async function main(): Promise<void> {
  quietSdkNodeNotice();
  console.log('Provider APIs: translation against the pass-through, measured in the same run');
  const request = await perCall(
    {
      'OpenAI body (pass-through)': () => JSON.stringify(openAiBody(body, 'gpt-5.6-luna')),
      'Anthropic Messages body': () => JSON.stringify(anthropicBody(chatCallOf(body), 'claude-sonnet-5', 128000).body),
      // Serialized as the SDK sends it: the same work as the others' JSON.
      'Bedrock Converse input': () => JSON.stringify(converseInput(chatCallOf(body), 'us.anthropic.claude-sonnet-5-v1:0', 128000).input),
    },
    2000,
  );
  console.log('\nPer request, the body as sent (system, 10 turns, 2 tools; µs, median of 9 runs; aim: translated at most 3x):');
  for (const [row, us] of Object.entries(request)) console.log(`  ${row.padEnd(30)} ${us.toFixed(1).padStart(7)} µs  ${(us / request['OpenAI body (pass-through)']).toFixed(2)}x`);
  const chunk = await perCall(
    {
      'OpenAI chunks (pass-through)': () => readAll(streamOf(openAiText)),
      'Anthropic events translated': () => readAll(chatResponse(anthropicStreamEvents(streamOf(anthropicText)), true)),
    },
    3,
  );
  const passThrough = chunk['OpenAI chunks (pass-through)'] / DELTAS;
  const translated = chunk['Anthropic events translated'] / DELTAS;
  console.log(`\nPer streamed chunk (${DELTAS} deltas; µs):`);
  console.log(`  read as sent (pass-through)   ${passThrough.toFixed(2).padStart(7)} µs`);
  console.log(`  translated from Anthropic     ${translated.toFixed(2).padStart(7)} µs  (+${(translated - passThrough).toFixed(2)} µs a chunk; aim: at most +10 µs)`);
  const e2e = await endToEnd();
  console.log('\nEnd to end, streamed completion through the local runtime (ms, 300 each, alternating):');
  for (const [row, { median: m, p90 }] of Object.entries(e2e)) console.log(`  ${row.padEnd(30)} median ${m.toFixed(2)}  p90 ${p90.toFixed(2)}`);
  const added = e2e['Anthropic API (translated)'].median - e2e['OpenAI API (pass-through)'].median;
  console.log(`  translation adds ${added.toFixed(2)} ms at the median (aim: at most 0.5 ms)`);
}

void main();
