import type { Clock, IdGenerator } from '../clock';
import { contentText } from './chat-request';
import type { UpstreamTransport } from './upstream';

/**
 * The development provider: a deterministic, in-process stand-in for an OpenAI-compatible
 * provider, so the local runtime answers completions with no account anywhere. It echoes
 * the last user message, one word per token, and streams it word by word. It speaks the
 * provider wire format (a `Response` with JSON or `text/event-stream`), so the gateway
 * handles its answers exactly as a real provider's.
 */
export function developmentProvider(clock: Clock, newId: IdGenerator): UpstreamTransport {
  return async (_url, init) => {
    let body: { model?: unknown; messages?: { role?: unknown; content?: unknown }[]; stream?: unknown; max_tokens?: unknown; max_completion_tokens?: unknown; stream_options?: { include_usage?: unknown } };
    try {
      body = JSON.parse(String(init.body));
    } catch {
      return Response.json({ error: { code: 400, message: 'body is not JSON' } }, { status: 400 });
    }
    const messages = Array.isArray(body.messages) ? body.messages : [];
    const lastUser = [...messages].reverse().find((m) => m?.role === 'user');
    const words = wordsOf(contentText(lastUser?.content));
    const limit = [body.max_completion_tokens, body.max_tokens].find((v): v is number => typeof v === 'number');
    const kept = limit !== undefined ? words.slice(0, limit) : words;
    const usage = {
      prompt_tokens: messages.reduce((sum, m) => sum + wordsOf(contentText(m?.content)).length, 0),
      completion_tokens: kept.length,
      total_tokens: 0,
    };
    usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
    const finishReason = kept.length < words.length ? 'length' : 'stop';
    const base = { id: `gen-${newId()}`, created: Math.floor(clock.now().getTime() / 1000), model: String(body.model) };

    if (body.stream !== true) {
      return Response.json({
        ...base,
        object: 'chat.completion',
        choices: [{ index: 0, message: { role: 'assistant', content: kept.join(' ') }, finish_reason: finishReason }],
        usage,
      });
    }

    const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
      `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices, ...extra })}\n\n`;
    const events = [
      chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]),
      ...kept.map((word, i) => chunk([{ index: 0, delta: { content: i === 0 ? word : ` ${word}` }, finish_reason: null }])),
      chunk([{ index: 0, delta: {}, finish_reason: finishReason }]),
      ...(body.stream_options?.include_usage === true ? [chunk([], { usage })] : []),
      'data: [DONE]\n\n',
    ];
    const encoder = new TextEncoder();
    const signal = init.signal;
    // One event per pull: the consumer sees the echo arrive word by word.
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (signal?.aborted) return controller.error(signal.reason);
        const next = events.shift();
        if (next === undefined) controller.close();
        else controller.enqueue(encoder.encode(next));
      },
    });
    return new Response(stream, { status: 200, headers: { 'Content-Type': 'text/event-stream' } });
  };
}

function wordsOf(text: string): string[] {
  return text.split(/\s+/).filter(Boolean);
}
