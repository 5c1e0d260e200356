/** Where an event stream's bytes come from: the next chunk, or `undefined` at the end. */
export interface ByteSource {
  next(): Promise<Uint8Array | undefined>;
}

/** One server-sent event: its `event` name and `data` (lines joined), `data` null for a comment-only event. */
export interface SseEvent {
  event: string | null;
  data: string | null;
  /** The event as received, without the blank line that ended it. */
  raw: string;
}

/** Splits a `text/event-stream` body into events (WHATWG HTML §9.2 framing). */
export async function* sseEvents(source: ByteSource): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  for (let chunk = await source.next(); chunk; chunk = await source.next()) {
    buffer += decoder.decode(chunk, { stream: true }).replace(/\r\n?/g, '\n');
    let end = buffer.indexOf('\n\n');
    while (end >= 0) {
      const raw = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      if (raw !== '') yield parseEvent(raw);
      end = buffer.indexOf('\n\n');
    }
  }
  const rest = (buffer + decoder.decode()).trim();
  if (rest !== '') yield parseEvent(rest);
}

/** A Fetch body as a {@link ByteSource}. */
export function bodySource(response: Response): ByteSource {
  const reader = response.body?.getReader();
  return {
    async next() {
      if (!reader) return undefined;
      const { done, value } = await reader.read();
      return done ? undefined : value;
    },
  };
}

function parseEvent(raw: string): SseEvent {
  const data: string[] = [];
  let event: string | null = null;
  for (const line of raw.split('\n')) {
    if (line.startsWith('data:')) data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
    else if (line.startsWith('event:')) event = line.slice(6).trim();
  }
  return { event, data: data.length > 0 ? data.join('\n') : null, raw };
}
