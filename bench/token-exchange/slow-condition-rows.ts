import type { ExchangeEventStore } from '../../lambdas/federation/exchange-events';
import type { LocalSigner } from '../../lambdas/signing/local-signer';
import { MemoryJtiStore } from '../../test/support/memory-jti-store';
import { MemoryRateCounterStore } from '../../test/support/memory-rate-counter-store';
import { slowestConditions } from '../slowest-conditions';
import { AUDIENCE, context, formBody, policy, proxyEvent, subjectToken, SUBJECT } from './fixtures';
import { buildHandler } from './handler';
import { frozenEvaluation } from './in-memory-records';
import { medians, us } from './timing';

/**
 * Exchanges whose policy holds one of the slowest conditions the bound admits, each with the
 * subject token that makes it slowest, against the plain exchange in the same rounds.
 */
export async function slowConditionRows(deps: { signer: LocalSigner; events: ExchangeEventStore; plainBody: string; next: () => number }): Promise<void> {
  const slow = slowestConditions(AUDIENCE).map((entry, i) => ({
    ...entry,
    policy: { ...policy, id: `b7c9e1f3-0000-4000-8000-00000000000${i}`, name: entry.name, subject: null, condition: entry.condition },
    token: subjectToken(entry.claims),
  }));
  const handler = buildHandler({
    evaluation: frozenEvaluation([policy, ...slow.map((entry) => entry.policy)]),
    signer: async () => deps.signer,
    stores: { rateCounters: new MemoryRateCounterStore(), jtis: new MemoryJtiStore(), events: deps.events },
  });
  // The plain exchange, and the same with a token as large as the slow ones (a claim no rule reads).
  const largeBody = formBody(subjectToken({ sub: SUBJECT, aud: AUDIENCE, padding: 'p'.repeat(11_300) }));
  const rows: Record<string, () => Promise<unknown>> = {
    plain: () => handler(proxyEvent(deps.plainBody, deps.next()), context),
    'plain, 16 KB token': () => handler(proxyEvent(largeBody, deps.next()), context),
  };
  for (const entry of slow) {
    // docs/reference.md#limits: what an exchange admits, so what an attacker can send.
    if (Buffer.byteLength(entry.token) > 16 * 1024) throw new Error(`the token for "${entry.name}" is larger than 16 KB`);
    const body = formBody(entry.token, entry.policy.id);
    const answer = await handler(proxyEvent(body, deps.next()), context);
    if (answer.statusCode !== 200) throw new Error(`the exchange for "${entry.name}" was refused: ${answer.body}`);
    rows[entry.name] = () => handler(proxyEvent(body, deps.next()), context);
  }
  const timed = await medians(rows);
  console.log('Slowest conditions the bound admits, handler with in-memory stores, median per exchange:');
  for (const [name, ms] of Object.entries(timed)) {
    console.log(`  ${name.padEnd(56)} ${us(ms)}  ${(ms / timed.plain!).toFixed(2).padStart(6)}x the plain exchange`);
  }
}
