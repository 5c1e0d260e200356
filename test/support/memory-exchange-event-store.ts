import { eventOrderKey, type ExchangeEvent, type ExchangeEventPage, type ExchangeEventQuery, type ExchangeEventStore } from '../../lambdas/federation/exchange-events';

/** Events in process memory, for tests and the benchmark. */
export class MemoryExchangeEventStore implements ExchangeEventStore {
  readonly events: ExchangeEvent[] = [];
  /** Where each event is in {@link events}, keyed as the table keys it. */
  private readonly positions = new Map<string, number>();

  async record(event: ExchangeEvent): Promise<void> {
    // One event per organization, policy, time and id: a rewrite replaces it.
    const key = `${event.organizationId}|${event.policyId}|${eventOrderKey(event)}`;
    const same = this.positions.get(key);
    if (same !== undefined) {
      this.events[same] = structuredClone(event);
      return;
    }
    this.positions.set(key, this.events.length);
    this.events.push(structuredClone(event));
  }

  async list({ organizationId, policyId, limit, cursor, now }: ExchangeEventQuery): Promise<ExchangeEventPage> {
    const nowSeconds = Math.floor(now.getTime() / 1000);
    const matching = this.events
      .filter((e) => e.organizationId === organizationId && (!policyId || e.policyId === policyId) && e.expiresAt > nowSeconds)
      .sort((a, b) => eventOrderKey(b).localeCompare(eventOrderKey(a)));
    let start = 0;
    if (cursor !== undefined) {
      start = matching.findIndex((e) => eventOrderKey(e) < cursor);
      if (start < 0) start = matching.length;
    }
    const page = matching.slice(start, start + limit);
    const more = start + limit < matching.length;
    return { events: page.map((e) => structuredClone(e)), nextCursor: more ? eventOrderKey(page[page.length - 1]!) : null };
  }
}
