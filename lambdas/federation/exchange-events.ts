import type { RefusalReason } from './exchange-types';

/** How long exchange events are kept (DynamoDB TTL on `expiresAt`). */
export const EXCHANGE_EVENT_RETENTION_DAYS = 30;

/**
 * One token exchange whose policy id named a policy (docs/reference.md#the-token-exchange), recorded for the policy's
 * organization. Never the subject token, the access token or a signature: the admin needs
 * the reason, the subject and the request id, not the credentials.
 */
export interface ExchangeEvent {
  id: string;
  organizationId: string;
  /** ISO 8601, milliseconds. */
  time: string;
  policyId: string;
  issuerId: string;
  outcome: 'issued' | 'refused';
  /** Null when issued. */
  reason: RefusalReason | null;
  /** The subject token's `sub`: verified when `subjectVerified`, otherwise as the token claimed it. */
  subject: string | null;
  subjectVerified: boolean;
  /** `requestContext.identity.sourceIp`. */
  sourceIp: string;
  /** The request id the workload saw in `X-Request-Id` and in the error description. */
  requestId: string;
  /** The issued access token's `jti`, when one was issued. */
  tokenJti: string | null;
  /**
   * The RFC 7638 thumbprint of the key of the exchange's valid DPoP proof: the key an issued
   * token is bound to (`cnf.jkt`). Null for an exchange without a valid proof (a Bearer token).
   */
  dpopJkt: string | null;
  /** Epoch seconds after which the event is gone. */
  expiresAt: number;
}

/** One page of an organization's or a policy's exchange events, newest first. */
export interface ExchangeEventPage {
  events: ExchangeEvent[];
  /** Opaque; absent on the last page. */
  nextCursor: string | null;
}

/** Which exchange events to list: an organization's, or one policy's of it, a page at a time. */
export interface ExchangeEventQuery {
  organizationId: string;
  policyId?: string;
  limit: number;
  cursor?: string;
  now: Date;
}

/** Thrown for a cursor this store did not hand out. */
export class InvalidCursorError extends Error {
  constructor() {
    super('cursor is not a cursor this endpoint returned');
    this.name = 'InvalidCursorError';
  }
}

/** Where exchange events are recorded, and listed for the organization's admin. */
export interface ExchangeEventStore {
  /** One write. */
  record(event: ExchangeEvent): Promise<void>;
  /** Newest first; expired events are absent. */
  list(query: ExchangeEventQuery): Promise<ExchangeEventPage>;
}

/** Events sort by time, then id, so two events in one millisecond keep a stable order. */
export function eventOrderKey(event: Pick<ExchangeEvent, 'time' | 'id'>): string {
  return `${event.time}#${event.id}`;
}
