import { randomUUID } from 'node:crypto';

/** Time and identifiers are injected so tests pin them. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

export type IdGenerator = () => string;

export const randomId: IdGenerator = () => randomUUID();
