import type { Clock, IdGenerator } from '../clock';
import { contentText } from './chat-request';
import { developmentAnswer, DevelopmentRefusal, wordsOf, type DevelopmentAnswer } from './development-answer';
import type { UpstreamTransport } from './upstream';

/**
 * The development provider: a deterministic, in-process stand-in for an OpenAI-compatible
 * provider, so the local runtime answers completions with no account anywhere. It echoes the
 * last user message one word per token, calls tools and answers in JSON when asked
 * (development-answer.ts says what it answers), and streams word by word (a JSON text or a
 * tool call's arguments by their lexical tokens). It speaks the provider wire format (a
 * `Response` with JSON or `text/event-stream`), so the gateway handles its answers exactly as
 * a real provider's.
 */
export function developmentProvider(clock: Clock, newId: IdGenerator): UpstreamTransport {
  return async (_url, init) => {
    let body: Record<string, unknown> & { messages?: unknown; stream_options?: { include_usage?: unknown } };
    try {
      body = JSON.parse(String(init.body));
    } catch {
      return refusal('body is not JSON');
    }
    if (typeof body !== 'object' || body === null) return refusal('body is not a JSON object');
    let answer: DevelopmentAnswer;
    try {
      answer = developmentAnswer(body);
    } catch (error) {
      if (error instanceof DevelopmentRefusal) return refusal(error.message);
      throw error;
    }
    const limit = [body.max_completion_tokens, body.max_tokens].find((v): v is number => typeof v === 'number');
    const kept = limit !== undefined ? answer.pieces.slice(0, Math.max(0, limit)) : answer.pieces;
    const messages = Array.isArray(body.messages) ? (body.messages as { content?: unknown }[]) : [];
    const usage = {
      prompt_tokens: messages.reduce((sum, m) => sum + wordsOf(contentText(m?.content)).length, 0),
      completion_tokens: kept.length,
      total_tokens: 0,
    };
    usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
    const finishReason = kept.length < answer.pieces.length ? 'length' : answer.kind === 'tool_call' ? 'tool_calls' : 'stop';
    const base = { id: `gen-${newId()}`, created: Math.floor(clock.now().getTime() / 1000), model: String(body.model) };
    const call = answer.kind === 'tool_call' ? { id: `call_${newId()}`, type: 'function' as const, name: answer.name } : undefined;

    if (body.stream !== true) {
      const message = call
        ? { role: 'assistant', content: null, tool_calls: [{ id: call.id, type: call.type, function: { name: call.name, arguments: kept.join('') } }] }
        : { role: 'assistant', content: kept.join('') };
      return Response.json({ ...base, object: 'chat.completion', choices: [{ index: 0, message, finish_reason: finishReason }], usage });
    }

    const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
      `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices, ...extra })}\n\n`;
    const delta = (value: Record<string, unknown>) => chunk([{ index: 0, delta: value, finish_reason: null }]);
    // As OpenAI streams a tool call: its id, type and name first, then its arguments in pieces, each with the call's index.
    const events = call
      ? [
          delta({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: call.id, type: call.type, function: { name: call.name, arguments: '' } }] }),
          ...kept.map((piece) => delta({ tool_calls: [{ index: 0, function: { arguments: piece } }] })),
        ]
      : [delta({ role: 'assistant', content: '' }), ...kept.map((piece) => delta({ content: piece }))];
    events.push(
      chunk([{ index: 0, delta: {}, finish_reason: finishReason }]),
      ...(body.stream_options?.include_usage === true ? [chunk([], { usage })] : []),
      'data: [DONE]\n\n',
    );
    const encoder = new TextEncoder();
    const signal = init.signal;
    // One event per pull: the consumer sees the answer arrive token by token. Every few events
    // it waits a turn of the event loop, as a provider's bytes come over the network: a relay of
    // a long answer never holds the loop (timers, a client that left) for the whole answer.
    let pulled = 0;
    const stream = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (++pulled % EVENTS_PER_TURN === 0) await new Promise((resolve) => setImmediate(resolve));
        if (signal?.aborted) return controller.error(signal.reason);
        const next = events.shift();
        if (next === undefined) controller.close();
        else controller.enqueue(encoder.encode(next));
      },
    });
    return new Response(stream, { status: 200, headers: { 'Content-Type': 'text/event-stream' } });
  };
}

/** Events the development provider streams between two turns of the event loop. */
const EVENTS_PER_TURN = 32;

/** A provider's refusal of the request, which the gateway relays as a 400. */
function refusal(message: string): Response {
  return Response.json({ error: { code: 400, message } }, { status: 400 });
}
