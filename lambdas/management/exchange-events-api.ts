import type { Clock } from '../clock';
import { InvalidCursorError, type ExchangeEvent, type ExchangeEventStore } from '../federation/exchange-events';
import { invalidParameter } from '../errors';

/** The page size of `GET /workload-identity/events` without `limit`. */
export const EVENTS_DEFAULT_LIMIT = 50;
/** The largest `limit` `GET /workload-identity/events` takes. */
export const EVENTS_MAX_LIMIT = 100;

/** One token exchange as `GET /workload-identity/events` answers it: who asked under which policy, and what came of it. */
export interface ExchangeEventView {
  id: string;
  time: string;
  policy_id: string;
  issuer_id: string;
  outcome: 'issued' | 'refused';
  reason: string | null;
  subject: string | null;
  subject_verified: boolean;
  source_ip: string;
  request_id: string;
  token_jti: string | null;
  /** RFC 9449: the thumbprint of the DPoP key an issued token is bound to; null for a Bearer token. */
  dpop_jkt: string | null;
}

/** An exchange event in its wire form. */
export function exchangeEventView(event: ExchangeEvent): ExchangeEventView {
  return {
    id: event.id,
    time: event.time,
    policy_id: event.policyId,
    issuer_id: event.issuerId,
    outcome: event.outcome,
    reason: event.reason,
    subject: event.subject,
    subject_verified: event.subjectVerified,
    source_ip: event.sourceIp,
    request_id: event.requestId,
    token_jti: event.tokenJti,
    // Events recorded before DPoP have no thumbprint.
    dpop_jkt: event.dpopJkt ?? null,
  };
}

/**
 * `GET /workload-identity/events`: the organization's token exchanges, newest first, with
 * the true reason of each refusal. `policy_id` narrows to one policy; `limit` (1-100,
 * default 50) and `cursor` (the previous page's `next_cursor`) page through them. The query
 * is the one its route's schema accepted (lambdas/management/routes/events.ts).
 */
export async function listExchangeEvents(
  store: ExchangeEventStore,
  clock: Clock,
  organizationId: string,
  query: { policy_id?: string; limit?: number; cursor?: string },
): Promise<{ data: ExchangeEventView[]; next_cursor: string | null }> {
  try {
    const page = await store.list({
      organizationId,
      policyId: query.policy_id?.toLowerCase(),
      limit: query.limit ?? EVENTS_DEFAULT_LIMIT,
      cursor: query.cursor,
      now: clock.now(),
    });
    return { data: page.events.map(exchangeEventView), next_cursor: page.nextCursor };
  } catch (error) {
    if (error instanceof InvalidCursorError) throw invalidParameter('cursor', error.message);
    throw error;
  }
}
