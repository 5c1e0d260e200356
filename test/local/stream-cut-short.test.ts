import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '../support/eventually';
import { startLocalProcess, type LocalProcess } from '../support/local-process';

/**
 * A long answer: the development provider echoes the prompt's words, one token each (about 190
 * bytes an event, so some 3.8 MB): more than the socket buffers of a loopback connection hold (about 2 MB).
 */
const WORDS = 20_000;
const PROMPT = Array.from({ length: WORDS }, (_, i) => `w${i}`).join(' ');
/** Slow readers the stop cuts off. */
const STREAMS = 16;

/** Starts a streamed completion and reads its answer until `bytes` have arrived; the body is left unread after that. */
async function openStream(service: LocalProcess, bytes: number, signal?: AbortSignal): Promise<string> {
  const response = await fetch(`${service.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${service.keys.workspace}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ model: 'openai/gpt-4o-mini', stream: true, messages: [{ role: 'user', content: PROMPT }] }),
    signal,
  });
  expect(response.status).toBe(200);
  const reader = response.body!.getReader();
  for (let read = 0; read < bytes; ) {
    const { value, done } = await reader.read();
    if (done) break;
    read += value.length;
  }
  return response.headers.get('x-generation-id')!;
}

/**
 * A client that reads the head of a streamed answer and then nothing more: a raw connection,
 * paused, so the kernel's buffers fill and the service meets backpressure (fetch would read on).
 */
async function slowReader(service: LocalProcess): Promise<{ id: string; socket: Socket }> {
  const url = new URL(`${service.baseUrl}/chat/completions`);
  const body = JSON.stringify({ model: 'openai/gpt-4o-mini', stream: true, messages: [{ role: 'user', content: PROMPT }] });
  const socket = connect(Number(url.port), url.hostname);
  socket.write(
    `POST ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${service.keys.workspace}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  let head = '';
  const id = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      head += chunk.toString('latin1');
      const found = /\r\nx-generation-id: (\S+)\r\n/i.exec(head);
      if (!found) return;
      socket.off('data', onData);
      socket.pause();
      resolve(found[1]!);
    };
    socket.on('data', onData);
    socket.once('error', reject);
  });
  socket.on('error', () => undefined);
  return { id, socket };
}

/**
 * A stream is charged what the provider bills, whatever its client does: one whose client left
 * is read to its end and charged the provider's usage; those a stop (Ctrl-C) cuts off are read
 * until the drain's last moment and charged the usage if it came, else the most they could cost,
 * never nothing. Read back after a restart on the same data.
 */
describe('streams cut short', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'modelgate-cut-short-'));
  let service: LocalProcess | undefined;
  afterAll(async () => {
    await service?.killHard();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('charges a client that left after 100 KB the whole answer, and slow readers a stop cut off what the provider billed or the most it could', async () => {
    service = await startLocalProcess(dataDir);
    const abort = new AbortController();
    const left = await openStream(service, 100 * 1024, abort.signal);
    abort.abort();
    // The answer it left is read to its end and recorded without it.
    await eventually(async () => expect((await fetch(`${service!.baseUrl}/generation?id=${left}`, { headers: { Authorization: `Bearer ${service!.keys.workspace}` } })).status).toBe(200), 30_000);
    const slow = await Promise.all(Array.from({ length: STREAMS }, () => slowReader(service!)));

    const stopping = Date.now();
    expect(await service.signal('SIGINT')).toBe(0);
    const stopMs = Date.now() - stopping;
    // The drain's 10 s, and the embedded DynamoDB's own stop.
    expect(stopMs).toBeLessThan(15_000);

    service = await startLocalProcess(dataDir);
    const generations = await Promise.all(
      [left, ...slow.map(({ id }) => id)].map(async (id) => {
        const answer = await fetch(`${service!.baseUrl}/generation?id=${id}`, { headers: { Authorization: `Bearer ${service!.keys.workspace}` } });
        expect(answer.status).toBe(200);
        return ((await answer.json()) as { data: { cancelled: boolean; tokens_completion: number; total_cost: number; charge_basis: string } }).data;
      }),
    );
    for (const { socket } of slow) socket.destroy();
    // The client that left: the development provider's whole answer, a token a word.
    expect(generations[0]).toMatchObject({ cancelled: true, charge_basis: 'provider_usage', tokens_completion: WORDS });
    for (const generation of generations) {
      expect(generation.cancelled).toBe(true);
      expect(generation.total_cost).toBeGreaterThan(0);
      if (generation.charge_basis === 'provider_usage') expect(generation.tokens_completion).toBe(WORDS);
      else expect(generation.charge_basis).toBe('maximum_cost');
    }
  }, 120_000);
});
