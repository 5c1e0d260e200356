import type { ProviderEndpoint } from '../catalog/types';
import { UpstreamError } from '../errors';

/** How a request reaches a provider: Node's HTTP client for HTTP providers (http-transport.ts), in process for the development one. */
export type UpstreamTransport = (url: string, init: RequestInit & { signal: AbortSignal }) => Promise<Response>;

/** Provider API keys, by provider tag. Never logged, never returned. */
export interface ProviderCredentials {
  /** The credential for a provider tag, `undefined` when the provider takes none. */
  forProvider(tag: string): Promise<string | undefined>;
}

/**
 * The most specific entry of a map keyed by provider: the exact tag (`novita/fp8`), the
 * provider (`novita`), then `*`. Maps built from configuration have no prototype.
 */
export function lookupByProvider<T>(map: Readonly<Record<string, T>>, tag: string): T | undefined {
  const provider = tag.split('/')[0]!;
  for (const key of [tag, provider, '*']) {
    if (Object.prototype.hasOwnProperty.call(map, key)) return map[key];
  }
  return undefined;
}

/** How completions reach the providers: where each is, how it is called, its key, and how long its answer may take. */
export interface UpstreamOptions {
  /** Provider to base URL (or the development provider), as configured. */
  upstreams: Readonly<Record<string, string>>;
  /** For HTTP providers. */
  transport: UpstreamTransport;
  /** For base URLs that name the development provider. */
  development: UpstreamTransport;
  developmentName: string;
  credentials: ProviderCredentials;
  /** First byte, and each later chunk, must arrive within this. */
  timeoutMs: number;
}

/** An upstream that answered 2xx, with the endpoint that served it and its deadline keeper. */
export interface OpenedUpstream {
  endpoint: ProviderEndpoint;
  response: Response;
  /** Reads the body within the idle timeout; aborts the upstream request when it passes. */
  reader: TimedReader;
  /** Stops the upstream request (a bad answer): never because the client left, which the provider bills all the same. */
  abort(): void;
}

/** Why an attempt failed, for the caller's error and the next attempt's decision. */
type AttemptFailure = { retry: boolean; error: UpstreamError };

/**
 * Sends the request to the caller's eligible endpoints in routing order (docs/reference.md#what-narrows-a-catalog): the
 * first that answers 2xx wins. A 5xx or a connection failure moves on to the next
 * endpoint; nothing has been sent to the client yet, so the switch is invisible. A timeout
 * (504) or a provider's refusal of the request (4xx) ends the attempt.
 *
 * `bodyFor` gives the body each endpoint is sent. A client gone before an attempt ends the
 * attempts (nothing was asked of that provider); once a provider has the request it runs to its
 * end whatever the client does, since the provider bills it (docs/limits.md, "Leaving early and failures").
 */
export async function openUpstream(
  endpoints: readonly ProviderEndpoint[],
  bodyFor: (endpoint: ProviderEndpoint) => string,
  clientSignal: AbortSignal,
  options: UpstreamOptions,
): Promise<OpenedUpstream> {
  let lastFailure: UpstreamError | undefined;
  let routable = 0;
  for (const endpoint of endpoints) {
    const baseUrl = lookupByProvider(options.upstreams, endpoint.tag);
    if (baseUrl === undefined) continue;
    routable++;
    if (clientSignal.aborted) throw clientSignal.reason;
    const outcome = await attempt(endpoint, baseUrl, bodyFor(endpoint), options);
    if ('response' in outcome) return outcome;
    if (!outcome.retry) throw outcome.error;
    lastFailure = outcome.error;
  }
  if (routable === 0) throw new UpstreamError('unavailable', 'No provider upstream is configured for this model');
  throw lastFailure!;
}

async function attempt(
  endpoint: ProviderEndpoint,
  baseUrl: string,
  body: string,
  options: UpstreamOptions,
): Promise<OpenedUpstream | AttemptFailure> {
  const controller = new AbortController();
  const deadline = new Deadline(controller, options.timeoutMs);

  const headers: Record<string, string> = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
  let credential: string | undefined;
  try {
    credential = await options.credentials.forProvider(endpoint.tag);
  } catch {
    // The credential store (Secrets Manager) is a dependency, not a fault of the request.
    throw new UpstreamError('unavailable', 'Provider credentials are unavailable; retry shortly');
  }
  if (credential) headers.Authorization = `Bearer ${credential}`;
  const development = baseUrl === options.developmentName;
  const transport = development ? options.development : options.transport;

  let response: Response;
  deadline.arm();
  try {
    response = await transport(`${baseUrl}/chat/completions`, { method: 'POST', headers, body, signal: controller.signal });
  } catch (error) {
    if (deadline.expired) return { retry: false, error: new UpstreamError('upstream_timeout', `Provider ${endpoint.provider_name} did not answer in time`) };
    void error;
    return { retry: true, error: new UpstreamError('upstream_failed', `Provider ${endpoint.provider_name} could not be reached`) };
  } finally {
    deadline.disarm();
  }

  if (response.ok) {
    return {
      endpoint,
      response,
      reader: new TimedReader(response, deadline, endpoint.provider_name),
      abort: () => controller.abort(),
    };
  }
  const detail = await errorMessage(response, deadline);
  controller.abort();
  if (response.status >= 500) {
    return { retry: true, error: new UpstreamError('upstream_failed', `Provider ${endpoint.provider_name} failed (HTTP ${response.status})`) };
  }
  // The caller can fix these: relay the provider's reason.
  if (response.status === 429) {
    return { retry: false, error: new UpstreamError('rate_limited', `Provider ${endpoint.provider_name} refused the request: ${detail}`) };
  }
  if ([400, 413, 422].includes(response.status)) {
    return { retry: false, error: new UpstreamError('invalid_input', `Provider ${endpoint.provider_name} refused the request: ${detail}`) };
  }
  // 401/403 and the rest concern the gateway's own provider account, not the caller.
  return { retry: false, error: new UpstreamError('upstream_failed', `Provider ${endpoint.provider_name} refused the gateway (HTTP ${response.status})`) };
}

/** The provider's error message, short and without echoing a request body. */
async function errorMessage(response: Response, deadline: Deadline): Promise<string> {
  deadline.arm();
  try {
    const text = (await response.text()).slice(0, 4096);
    const parsed = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    const message = typeof parsed.error === 'string' ? parsed.error : (parsed.error?.message ?? parsed.message);
    return typeof message === 'string' && message !== '' ? message.slice(0, 300) : `HTTP ${response.status}`;
  } catch {
    return `HTTP ${response.status}`;
  } finally {
    deadline.disarm();
  }
}

/** Aborts the upstream request when armed for longer than the timeout. */
class Deadline {
  private timer: NodeJS.Timeout | undefined;
  expired = false;

  constructor(
    private readonly controller: AbortController,
    private readonly timeoutMs: number,
  ) {}

  arm(): void {
    this.disarm();
    this.timer = setTimeout(() => {
      this.expired = true;
      this.controller.abort(new Error('upstream timeout'));
    }, this.timeoutMs);
  }

  disarm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/** Reads an upstream body chunk by chunk, each within the idle timeout. */
export class TimedReader {
  private readonly reader: ReadableStreamDefaultReader<Uint8Array> | undefined;

  constructor(
    response: Response,
    private readonly deadline: Deadline,
    private readonly providerName: string,
  ) {
    this.reader = response.body?.getReader();
  }

  /** The next chunk, or `undefined` at the end. Throws 504 on a stall, 502 on a broken connection. */
  async next(): Promise<Uint8Array | undefined> {
    if (!this.reader) return undefined;
    this.deadline.arm();
    try {
      const { done, value } = await this.reader.read();
      return done ? undefined : value;
    } catch (error) {
      if (this.deadline.expired) throw new UpstreamError('upstream_timeout', `Provider ${this.providerName} stopped answering`);
      void error;
      throw new UpstreamError('upstream_failed', `Provider ${this.providerName} broke off the answer`);
    } finally {
      this.deadline.disarm();
    }
  }

  /** The whole body as text, at most `maxBytes`. */
  async text(maxBytes: number): Promise<string> {
    const decoder = new TextDecoder();
    let out = '';
    let size = 0;
    for (let chunk = await this.next(); chunk; chunk = await this.next()) {
      size += chunk.length;
      if (size > maxBytes) throw new UpstreamError('upstream_failed', `Provider ${this.providerName} answered more than ${maxBytes} bytes`);
      out += decoder.decode(chunk, { stream: true });
    }
    return out + decoder.decode();
  }
}

/** One server-sent event: its `data` (lines joined), or null for a comment-only event. */
export interface SseEvent {
  data: string | null;
  /** The event as received, without the blank line that ended it. */
  raw: string;
}

/** Splits an upstream `text/event-stream` body into events (WHATWG HTML §9.2 framing). */
export async function* sseEvents(reader: TimedReader): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  for (let chunk = await reader.next(); chunk; chunk = await reader.next()) {
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

function parseEvent(raw: string): SseEvent {
  const data: string[] = [];
  for (const line of raw.split('\n')) {
    if (line.startsWith('data:')) data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
  }
  return { data: data.length > 0 ? data.join('\n') : null, raw };
}

/** No provider credentials at all (every configured upstream is open or in-process). */
export const NO_CREDENTIALS: ProviderCredentials = { forProvider: async () => undefined };
