/** How a request reaches a provider over HTTP: Node's HTTP client in the functions (lambdas/inference/http-transport.ts). */
export type HttpTransport = (url: string, init: RequestInit & { signal: AbortSignal }) => Promise<Response>;

/** One completion as a provider API's client sends it. */
export interface ProviderRequest {
  /** The provider's id of the model (lambdas/providers/targets.ts). */
  modelId: string;
  /** The chat request as the gateway sends it: the public chat shape, token caps within the endpoint's. */
  body: Readonly<Record<string, unknown>>;
  /** The endpoint's completion limit: Anthropic's required `max_tokens` when the client sends none. */
  maxCompletionTokens: number;
  /** The provider's API key, when it takes one. */
  credential: string | undefined;
  signal: AbortSignal;
}

/**
 * Sends one completion in a provider's own API and answers as the relay reads an upstream
 * (lambdas/providers/chat-answer.ts): a 2xx in the chat-completions shape, or the provider's
 * failure status with a body whose `error.message` says why.
 */
export type ProviderClient = (request: ProviderRequest) => Promise<Response>;

/** A failure status in the shape the relay reads, with headers such as `Retry-After` kept. */
export function failureResponse(status: number, message: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ error: { message } }), { status, headers: { 'Content-Type': 'application/json', ...headers } });
}
