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
