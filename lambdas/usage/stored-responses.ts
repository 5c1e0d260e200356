/**
 * Responses kept for `GET /responses/{id}` and `previous_response_id` (docs/api.md#the-responses-api):
 * the response as it was answered and the conversation it ends, visible to its organization only,
 * for a deployment's retention time.
 */

type Json = Record<string, unknown>;

/** One kept response. */
export interface StoredResponse {
  /** `resp_…`. */
  id: string;
  organizationId: string;
  /** ISO 8601: when the request arrived. */
  createdAt: string;
  /** The `response` object as it was answered. */
  response: Json;
  /** The conversation it ends, as Responses items: the continued response's, this request's input, its output. */
  items: Json[];
}

/** Where responses are kept. Another organization's response, and one past its time, are not found. */
export interface ResponseStore {
  /** Keeps a response; `too_large` when its conversation is past what one is kept with (then it is not kept). */
  put(stored: StoredResponse): Promise<'stored' | 'too_large'>;
  get(id: string, organizationId: string): Promise<StoredResponse | undefined>;
  /** Removes a response; false when there was none to remove. */
  delete(id: string, organizationId: string): Promise<boolean>;
}

/** How long a response is kept by default, in days (the `responseRetentionDays` setting). */
export const RESPONSE_RETENTION_DAYS = 30;

/** What a response id looks like: `resp_` and the gateway's random id. Anything else is not one. */
export const RESPONSE_ID = /^resp_[A-Za-z0-9_-]{8,64}$/;
