import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';

/** What the upstream does with the next request to one provider path. */
export type UpstreamBehaviour =
  /**
   * Answers like an OpenAI-compatible provider: echo of the last user message, JSON or SSE, after
   * `waitMs` (a model thinking) or once `until` has settled, with `delayMs` between stream chunks.
   */
  | { kind: 'answer'; waitMs?: number; until?: Promise<unknown>; delayMs?: number; shape?: AnswerShape }
  /** Answers with this status and an OpenAI-style error body. */
  | { kind: 'status'; status: number; message?: string }
  /** Closes the connection without answering. */
  | { kind: 'hang-up' }
  /** Never answers (headers included). */
  | { kind: 'stall' }
  /** Streams this many content chunks, then goes silent. */
  | { kind: 'stall-after'; chunks: number }
  /** Streams content chunks, then closes without `[DONE]`. */
  | { kind: 'cut-off'; chunks: number }
  /** Answers 200 with a body that is not JSON. */
  | { kind: 'garbage' }
  /** Streams content chunks, then the provider's own error event (a string code, as OpenAI's). */
  | { kind: 'error-event'; chunks: number };

/**
 * How an answer is written:
 * - `full`: every member an OpenAI-compatible provider usually sends;
 * - `bare`: only the content: every member the public response schemas make optional or
 *   nullable is left out, and so are `id`, `created`, `object`, `model`, a choice's `index`
 *   and the message's `role`, which providers also leave out;
 * - `extras`: members the public schemas do not name (kept by the gateway) and nulls where
 *   they allow none (`usage: null` and `system_fingerprint: null` in every chunk, as
 *   OpenAI-style providers send them).
 */
export type AnswerShape = 'full' | 'bare' | 'extras';

export interface ReceivedRequest {
  provider: string;
  headers: IncomingMessage['headers'];
  body: any;
  /** Set when the gateway closed the connection before the answer was complete. */
  abortedByGateway: boolean;
  /** Settles when the connection of this request has closed, answered in full or not. */
  closed: Promise<void>;
}

export interface ScriptedUpstreamOptions {
  /**
   * Serve HTTPS with this certificate (for `127.0.0.1`), as a deployed stack requires of its
   * upstreams; the caller makes the gateway trust its CA.
   * @default plain HTTP
   */
  tls?: { certPem: string; keyPem: string };
  /**
   * What answers report as usage. `echo`: 11 prompt tokens and a token a word. `as-asked`: as a
   * provider that bills what it was allowed would: every byte of the body a prompt token, and
   * the larger of `max_tokens` and `max_completion_tokens` (else a token a word) for each of `n`
   * choices, which it answers, and {@link IMAGE_TOKENS} for each image.
   * @default echo
   */
  bills?: 'echo' | 'as-asked';
  /** The most prompt tokens an `as-asked` provider bills: its context, which no prompt passes. @default no bound */
  contextTokens?: number;
}

export interface ScriptedUpstream {
  /** The OpenAI-compatible base URL of one provider path, e.g. `http://127.0.0.1:1234/alpha/v1`. */
  baseUrl(provider: string): string;
  /** Queues behaviours for a provider; unscripted requests get `answer`. */
  script(provider: string, ...behaviours: UpstreamBehaviour[]): void;
  received: ReceivedRequest[];
  reset(): void;
  stop(): Promise<void>;
}

/**
 * A real HTTP server speaking the OpenAI-compatible chat-completions protocol that streams,
 * stalls and fails on demand, one queue of behaviours per provider path.
 */
export async function startScriptedUpstream(options: ScriptedUpstreamOptions = {}): Promise<ScriptedUpstream> {
  const queues = new Map<string, UpstreamBehaviour[]>();
  const received: ReceivedRequest[] = [];
  const listener = (request: IncomingMessage, response: ServerResponse) => {
    void handle(request, response);
  };
  const server: Server = options.tls ? createHttpsServer({ cert: options.tls.certPem, key: options.tls.keyPem }, listener) : createServer(listener);

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const match = /^\/([^/]+)\/v1\/chat\/completions$/.exec(request.url ?? '');
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    if (!match || request.method !== 'POST') {
      response.writeHead(404).end();
      return;
    }
    const provider = match[1]!;
    const raw = Buffer.concat(chunks);
    const body = JSON.parse(raw.toString('utf8'));
    let closed!: () => void;
    const record: ReceivedRequest = { provider, headers: request.headers, body, abortedByGateway: false, closed: new Promise<void>((resolve) => (closed = resolve)) };
    received.push(record);
    response.on('close', () => {
      if (!response.writableFinished) record.abortedByGateway = true;
      closed();
    });
    const behaviour = queues.get(provider)?.shift() ?? { kind: 'answer' };
    const words = lastUserWords(body);
    const base = { id: `up-${received.length}`, created: 1_700_000_000, model: body.model };
    const event = (payload: unknown) => `data: ${JSON.stringify(payload)}\n\n`;
    const contentChunk = (word: string, i: number) =>
      event({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: i === 0 ? word : ` ${word}` }, finish_reason: null }] });
    const streamHead = () => response.writeHead(200, { 'Content-Type': 'text/event-stream' });
    const usage = options.bills === 'as-asked' ? billedAsAsked(body, raw.length, words.length, options.contextTokens) : { prompt_tokens: 11, completion_tokens: words.length, total_tokens: 11 + words.length };
    const choices = options.bills === 'as-asked' && Number.isInteger(body.n) ? (body.n as number) : 1;

    const shape = behaviour.kind === 'answer' ? (behaviour.shape ?? 'full') : 'full';
    const extras = shape === 'extras' ? { system_fingerprint: null, x_provider_trace: 'trace-1' } : {};
    const chunkExtras = shape === 'extras' ? { system_fingerprint: null, usage: null, obfuscation: 'k3' } : {};
    const content = (text: string) => (shape === 'bare' ? { content: text } : { role: 'assistant', content: text });

    switch (behaviour.kind) {
      case 'error-event':
        streamHead();
        for (let i = 0; i < behaviour.chunks; i++) response.write(contentChunk(words[i % words.length] ?? 'x', i));
        response.end(event({ error: { message: 'The model is overloaded', code: 'server_error', type: 'server_error' } }));
        return;
      case 'status':
        response.writeHead(behaviour.status, { 'Content-Type': 'application/json' });
        response.end(JSON.stringify({ error: { message: behaviour.message ?? `scripted ${behaviour.status}`, code: behaviour.status } }));
        return;
      case 'hang-up':
        request.socket.destroy();
        return;
      case 'stall':
        return;
      case 'garbage':
        response.writeHead(200, { 'Content-Type': 'application/json' });
        response.end('<html>upstream proxy error</html>');
        return;
      case 'stall-after':
      case 'cut-off':
        streamHead();
        for (let i = 0; i < behaviour.chunks; i++) response.write(contentChunk(words[i % words.length] ?? 'x', i));
        if (behaviour.kind === 'cut-off') response.end();
        return;
      case 'answer':
        if (behaviour.waitMs) await new Promise((resolve) => setTimeout(resolve, behaviour.waitMs));
        if (behaviour.until) await behaviour.until;
        if (response.destroyed) return;
        if (body.stream !== true) {
          response.writeHead(200, { 'Content-Type': 'application/json' });
          const message = content(words.join(' '));
          response.end(
            JSON.stringify(
              shape === 'bare'
                ? { choices: [{ message }] }
                : {
                    ...base,
                    object: 'chat.completion',
                    ...extras,
                    choices: Array.from({ length: choices }, (_, index) => ({
                      index,
                      message: shape === 'extras' ? { ...message, annotations: [] } : message,
                      finish_reason: 'stop',
                      ...(shape === 'extras' ? { native_finish_reason: 'end_turn' } : {}),
                    })),
                    usage: shape === 'extras' ? { ...usage, cost_in_credits: 3 } : usage,
                  },
            ),
          );
          return;
        }
        streamHead();
        // A keep-alive comment, as providers send while a model warms up.
        response.write(': processing\n\n');
        for (let i = 0; i < words.length; i++) {
          if (response.destroyed) return;
          const delta = i === 0 ? words[i]! : ` ${words[i]}`;
          response.write(
            shape === 'full'
              ? contentChunk(words[i]!, i)
              : event(shape === 'bare' ? { choices: [{ delta: { content: delta } }] } : { ...base, object: 'chat.completion.chunk', ...chunkExtras, choices: [{ index: 0, delta: { content: delta }, finish_reason: null }] }),
          );
          if (behaviour.delayMs) await new Promise((resolve) => setTimeout(resolve, behaviour.delayMs));
        }
        if (response.destroyed) return;
        if (shape !== 'bare') response.write(event({ ...base, object: 'chat.completion.chunk', ...chunkExtras, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }));
        if (body.stream_options?.include_usage && shape !== 'bare') response.write(event({ ...base, object: 'chat.completion.chunk', ...chunkExtras, choices: [], usage }));
        response.end('data: [DONE]\n\n');
    }
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: (provider) => `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}/${provider}/v1`,
    script(provider, ...behaviours) {
      queues.set(provider, [...(queues.get(provider) ?? []), ...behaviours]);
    },
    received,
    reset() {
      queues.clear();
      received.length = 0;
    },
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** What OpenAI counts for the largest image gpt-4o is sent in high detail. */
export const IMAGE_TOKENS = 1445;

/** The usage of a provider that bills all it was allowed: the body's bytes and its images within its context, and the largest cap for each choice. */
function billedAsAsked(body: { max_tokens?: unknown; max_completion_tokens?: unknown; n?: unknown; messages?: unknown }, bytes: number, words: number, context = Infinity): Record<string, number> {
  const caps = [body.max_tokens, body.max_completion_tokens].filter((cap): cap is number => typeof cap === 'number');
  const completion = (caps.length > 0 ? Math.max(...caps) : words) * (typeof body.n === 'number' ? body.n : 1);
  const parts = (Array.isArray(body.messages) ? body.messages : []).flatMap((message: { content?: unknown }) => (Array.isArray(message.content) ? message.content : []));
  const images = parts.filter((part: { type?: unknown }) => part.type === 'image_url').length;
  const prompt = Math.min(bytes + images * IMAGE_TOKENS, context);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

function lastUserWords(body: { messages?: { role: string; content: unknown }[] }): string[] {
  const last = [...(body.messages ?? [])].reverse().find((m) => m.role === 'user');
  return typeof last?.content === 'string' ? last.content.split(/\s+/).filter(Boolean) : [];
}
