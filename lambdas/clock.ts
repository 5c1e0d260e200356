import { randomUUID } from 'node:crypto';

/** Time and identifiers are injected so tests pin them. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

export type IdGenerator = () => string;

export const randomId: IdGenerator = () => randomUUID();

/** A number in [0, 1): which copy of a hot item a request reads, which shard of a counter it writes. */
export type Random = () => number;

export const systemRandom: Random = Math.random;
