import type { Clock } from '../../lambdas/clock';

/** A clock tests move by hand. */
export class FixedClock implements Clock {
  constructor(private current: Date = new Date('2026-11-21T12:00:00Z')) {}
  now(): Date {
    return new Date(this.current);
  }
  set(date: Date | string): void {
    this.current = new Date(date);
  }
  advance(ms: number): void {
    this.current = new Date(this.current.getTime() + ms);
  }
}
