import { randomUUID } from 'node:crypto';

/** Time and identifiers are injected so tests pin them. */
export interface Clock {
  now(): Date;
}

/** The clock of the running service: the system's time. */
export const systemClock: Clock = { now: () => new Date() };

/** Mints a new identifier: a lowercase RFC 4122 UUID in the service, fixed ids in tests. */
export type IdGenerator = () => string;

/** The service's id generator: `randomUUID`. */
export const randomId: IdGenerator = () => randomUUID();

/** A number in [0, 1): which copy of a hot item a request reads, which shard of a counter it writes. */
export type Random = () => number;

/** The service's source of randomness: `Math.random`. */
export const systemRandom: Random = Math.random;

/**
 * What a writer stamps on what it leaves for later (its holds, its open completions): `-` in
 * AWS, where any container may still be running; locally the process's start (`writersSince`),
 * in base 36, so the next process knows what an earlier one left.
 */
export function writerEpoch(writersSince: Date | undefined): string {
  return writersSince ? writersSince.getTime().toString(36) : '-';
}

/** Whether the writer of `epoch` has stopped: locally, it started before this process (`writersSince`). Never in AWS. */
export function writerStopped(epoch: unknown, writersSince: Date | undefined): boolean {
  if (writersSince === undefined || typeof epoch !== 'string' || epoch === '-') return false;
  const started = parseInt(epoch, 36);
  return Number.isFinite(started) && started < writersSince.getTime();
}
