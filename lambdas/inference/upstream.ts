import type { ProviderEndpoint } from '../catalog/types';
import { DomainError, TooManyRequestsError, UpstreamError } from '../errors';
import { completionLimit } from '../spending/estimate';
import type { HttpTransport, ProviderClient } from '../providers/provider-client';
import { providerModelId, type ApiTarget, type UpstreamTarget } from '../providers/targets';

/** How a request reaches a provider: Node's HTTP client for HTTP providers (http-transport.ts), in process for the development one. */
export type UpstreamTransport = HttpTransport;

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
  const key = upstreamEntryOf(map, tag);
  return key === undefined ? undefined : map[key];
}

/** The key of {@link lookupByProvider}'s entry for a tag, or undefined. */
export function upstreamEntryOf(map: Readonly<Record<string, unknown>>, tag: string): string | undefined {
  const provider = tag.split('/')[0]!;
  return [tag, provider, '*'].find((key) => Object.prototype.hasOwnProperty.call(map, key));
}

/** How completions reach the providers: where each is, how it is called, its key, and how long its answer may take. */
export interface UpstreamOptions {
  /** Provider to its upstream, as configured: a base URL, the development provider, or a provider API. */
  upstreams: Readonly<Record<string, UpstreamTarget>>;
  /** For HTTP providers. */
  transport: UpstreamTransport;
  /** The client of a provider API target (lambdas/providers/clients.ts). */
  clientFor: (target: ApiTarget) => ProviderClient;
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
type AttemptFailure = { retry: boolean; error: DomainError };

/** Where one endpoint's completions go (its upstream and the model id it is sent), or why they cannot go anywhere. */
export type EndpointRoute = { target: UpstreamTarget; modelId: string } | { unroutable: 'no upstream' | 'no model id' };

/**
 * The route of an endpoint of a catalog model (docs/providers.md): the most specific upstream
 * entry for its provider tag; an upstream that speaks the public API takes the catalog id, a
 * provider API the provider's id of the model, without which the endpoint is not routable.
 */
export function routeOf(endpoint: Pick<ProviderEndpoint, 'tag'>, catalogId: string, upstreams: Readonly<Record<string, UpstreamTarget>>): EndpointRoute {
  const target = lookupByProvider(upstreams, endpoint.tag);
  if (target === undefined) return { unroutable: 'no upstream' };
  if (typeof target === 'string') return { target, modelId: catalogId };
  const modelId = providerModelId(target, catalogId);
  return modelId === undefined ? { unroutable: 'no model id' } : { target, modelId };
}

/** A completion to send: the catalog model, its eligible endpoints in routing order, and the body each endpoint is sent. */
export interface UpstreamRequest {
  modelId: string;
  endpoints: readonly ProviderEndpoint[];
  bodyFor: (endpoint: ProviderEndpoint) => string;
}

/**
 * Sends the request to the caller's eligible endpoints in routing order (docs/reference.md#what-narrows-a-catalog): the
 * first that answers 2xx wins. A failure before the first byte (a 5xx, Anthropic's 529, a
 * provider's 429, a connection failure) moves on to the next endpoint; nothing has been sent to
 * the client yet, so the switch is invisible. A timeout (504) or a provider's refusal of the
 * request (4xx) ends the attempts. An endpoint without a route is skipped.
 *
 * A client gone before an attempt ends the attempts (nothing was asked of that provider); once
 * a provider has the request it runs to its end whatever the client does, since the provider
 * bills it (docs/limits.md, "Leaving early and failures").
 */
export async function openUpstream(request: UpstreamRequest, clientSignal: AbortSignal, options: UpstreamOptions): Promise<OpenedUpstream> {
  let lastFailure: DomainError | undefined;
  let routable = 0;
  for (const endpoint of request.endpoints) {
    const route = routeOf(endpoint, request.modelId, options.upstreams);
    if ('unroutable' in route) continue;
    routable++;
    if (clientSignal.aborted) throw clientSignal.reason;
    const outcome = await attempt(endpoint, route, request.bodyFor(endpoint), options);
    if ('response' in outcome) return outcome;
    if (!outcome.retry) throw outcome.error;
    lastFailure = outcome.error;
  }
  if (routable === 0) throw new UpstreamError('unavailable', 'No provider upstream is configured for this model');
  throw lastFailure!;
}

/** Failures of every endpoint of a model that the next model of a request's `models` may not meet. */
const NEXT_MODEL_KINDS = new Set(['upstream_failed', 'rate_limited', 'unavailable']);

/**
 * Opens the first model of `requests` (a request's `models`, in order) that any of its endpoints
 * serves: when every endpoint of one fails before the first byte, or none is routable, the next
 * model is tried; a refusal of the request itself or a timeout ends the attempts. Returns the
 * position of the model that answered.
 */
export async function openFirstModel(requests: readonly UpstreamRequest[], clientSignal: AbortSignal, options: UpstreamOptions): Promise<{ index: number; upstream: OpenedUpstream }> {
  for (let index = 0; ; index++) {
    try {
      return { index, upstream: await openUpstream(requests[index]!, clientSignal, options) };
    } catch (error) {
      if (index + 1 >= requests.length || !(error instanceof DomainError) || !NEXT_MODEL_KINDS.has(error.kind)) throw error;
    }
  }
}

async function attempt(
  endpoint: ProviderEndpoint,
  route: { target: UpstreamTarget; modelId: string },
  body: string,
  options: UpstreamOptions,
): Promise<OpenedUpstream | AttemptFailure> {
  const controller = new AbortController();
  const deadline = new Deadline(controller, options.timeoutMs);
  const { target } = route;
  let credential: string | undefined;
  try {
    credential = typeof target === 'object' && target.api === 'bedrock' ? undefined : await options.credentials.forProvider(endpoint.tag);
  } catch {
    // The credential store (Secrets Manager) is a dependency, not a fault of the request.
    throw new UpstreamError('unavailable', 'Provider credentials are unavailable; retry shortly');
  }

  let response: Response;
  deadline.arm();
  try {
    response = await send(target, route.modelId, endpoint, body, credential, controller.signal, options);
  } catch (error) {
    // A request the provider's API cannot carry (lambdas/providers): the caller's to fix.
    if (error instanceof DomainError) throw error;
    if (deadline.expired) return { retry: false, error: new UpstreamError('upstream_timeout', `Provider ${endpoint.provider_name} did not answer in time`) };
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
  return failureOf(response, detail, endpoint.provider_name);
}

/** The request to one upstream: the public API's chat completions (or the development provider) as sent, or a provider API's client. */
function send(target: UpstreamTarget, modelId: string, endpoint: ProviderEndpoint, body: string, credential: string | undefined, signal: AbortSignal, options: UpstreamOptions): Promise<Response> {
  if (typeof target === 'object') {
    return options.clientFor(target)({ modelId, body: JSON.parse(body) as Record<string, unknown>, maxCompletionTokens: completionLimit(endpoint), credential, signal });
  }
  const headers: Record<string, string> = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
  if (credential) headers.Authorization = `Bearer ${credential}`;
  const transport = target === options.developmentName ? options.development : options.transport;
  return transport(`${target}/chat/completions`, { method: 'POST', headers, body, signal });
}

/** What a provider's failure status means for the caller and for the next endpoint. */
function failureOf(response: Response, detail: string, name: string): AttemptFailure {
  if (response.status === 429) {
    const retryAfter = retryAfterSeconds(response.headers.get('retry-after'));
    const message = `Provider ${name} refused the request: ${detail}`;
    return { retry: true, error: retryAfter === undefined ? new UpstreamError('rate_limited', message) : new TooManyRequestsError(message, retryAfter) };
  }
  if (response.status >= 500) {
    return { retry: true, error: new UpstreamError('upstream_failed', `Provider ${name} failed (HTTP ${response.status})`) };
  }
  // The caller can fix these: relay the provider's reason.
  if ([400, 413, 422].includes(response.status)) {
    return { retry: false, error: new UpstreamError('invalid_input', `Provider ${name} refused the request: ${detail}`) };
  }
  // 401/403, a 404 (a model id the provider does not know), and the rest concern the gateway's own provider account, not the caller.
  return { retry: false, error: new UpstreamError('upstream_failed', `Provider ${name} refused the gateway (HTTP ${response.status})`) };
}

/** `Retry-After` in whole seconds (RFC 9110 §10.2.3: seconds or an HTTP date), within a day; undefined when absent or malformed. */
function retryAfterSeconds(value: string | null): number | undefined {
  if (value === null) return undefined;
  const seconds = /^\d{1,6}$/.test(value.trim()) ? Number(value.trim()) : Math.ceil((Date.parse(value) - Date.now()) / 1000);
  return Number.isFinite(seconds) ? Math.min(86_400, Math.max(0, seconds)) : undefined;
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

/** No provider credentials at all (every configured upstream is open or in-process). */
export const NO_CREDENTIALS: ProviderCredentials = { forProvider: async () => undefined };
