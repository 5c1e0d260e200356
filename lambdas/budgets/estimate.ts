import type { ProviderEndpoint } from '../catalog/types';
import { requestCost } from '../usage/usage';
import { larger, ZERO } from '../usd';

/**
 * The most a completion can cost (docs/architecture.md, "Spending limits"), as its usage will be
 * priced (lambdas/usage/usage.ts `requestCost`), on whichever of `endpoints` serves it:
 *
 * - prompt tokens: no more than the bytes of the body sent (a byte-level tokenizer makes at most
 *   one token of each byte of text), and no more than the endpoint's context;
 * - completion tokens: the request's `max_tokens` or `max_completion_tokens` (the smaller when
 *   both), else the endpoint's maximum completion tokens, else its whole context.
 *
 * Its error: what a provider counts beyond the text sent (images named by URL, tools it adds),
 * or a provider reporting more completion tokens than it was allowed.
 */
export function maximumCost(body: Readonly<Record<string, unknown>>, sentBytes: number, endpoints: readonly ProviderEndpoint[], at: Date): string {
  const asked = [body.max_tokens, body.max_completion_tokens].filter((value): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value > 0);
  let most = ZERO;
  for (const endpoint of endpoints) {
    const context = positive(endpoint.context_length) ?? Number.MAX_SAFE_INTEGER;
    const prompt = Math.min(sentBytes, positive(endpoint.max_prompt_tokens) ?? context, context);
    const allowed = positive(endpoint.max_completion_tokens) ?? context;
    const completion = Math.min(asked.length > 0 ? Math.min(...asked) : allowed, allowed, context);
    most = larger(most, requestCost(endpoint, prompt, completion, at));
  }
  return most;
}

const positive = (value: number | null | undefined): number | undefined => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : undefined);
