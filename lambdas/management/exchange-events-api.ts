import type { Clock } from '../clock';
import { InvalidCursorError, type ExchangeEvent, type ExchangeEventStore } from '../federation/exchange-events';
import { invalidParameter } from '../errors';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const EVENTS_DEFAULT_LIMIT = 50;
export const EVENTS_MAX_LIMIT = 100;

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
}

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
  };
}

/**
 * `GET /workload-identity/events`: the organization's token exchanges, newest first, with
 * the true reason of each refusal. `policy_id` narrows to one policy; `limit` (1-100,
 * default 50) and `cursor` (the previous page's `next_cursor`) page through them.
 */
export async function listExchangeEvents(
  store: ExchangeEventStore,
  clock: Clock,
  organizationId: string,
  query: Readonly<Record<string, string | undefined>>,
): Promise<{ data: ExchangeEventView[]; next_cursor: string | null }> {
  const policyId = query.policy_id;
  if (policyId !== undefined && !UUID.test(policyId)) throw invalidParameter('policy_id', 'must be a policy id (a UUID)');
  let limit = EVENTS_DEFAULT_LIMIT;
  if (query.limit !== undefined) {
    limit = Number(query.limit);
    if (!/^\d+$/.test(query.limit) || limit < 1 || limit > EVENTS_MAX_LIMIT) {
      throw invalidParameter('limit', `must be an integer from 1 to ${EVENTS_MAX_LIMIT}`);
    }
  }
  const cursor = query.cursor;
  if (cursor !== undefined && (cursor === '' || cursor.length > 1024)) throw invalidParameter('cursor', 'is not a cursor this endpoint returned');
  try {
    const page = await store.list({ organizationId, policyId: policyId?.toLowerCase(), limit, cursor, now: clock.now() });
    return { data: page.events.map(exchangeEventView), next_cursor: page.nextCursor };
  } catch (error) {
    if (error instanceof InvalidCursorError) throw invalidParameter('cursor', error.message);
    throw error;
  }
}
