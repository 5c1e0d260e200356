/** Token counts of one completed request, as the provider reported them. */
export interface CompletionUsage {
  promptTokens: number;
  completionTokens: number;
}
