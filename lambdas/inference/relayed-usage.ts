/** Token counts of one completed request, as the provider reported them. */
export interface CompletionUsage {
  /** Every prompt token: fresh, read from a cache and written to one. */
  promptTokens: number;
  completionTokens: number;
  /** Of the prompt tokens, those read from the provider's cache. */
  cachedTokens?: number;
  /** Of the prompt tokens, those written to the provider's cache. */
  cacheWriteTokens?: number;
}
