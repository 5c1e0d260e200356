import { invalidParameter } from '../errors';

const UTC_TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?Z$/;

/**
 * A key expiry must be a real instant in the future. `Date.parse` rolls impossible dates
 * over (`2030-02-31` becomes March 3rd), so every field is checked against the date it
 * produced; an expiry in the past would create a key that is dead on arrival.
 */
export function checkExpiry(value: string, now: Date): void {
  const match = UTC_TIMESTAMP.exec(value);
  if (!match) throw invalidParameter('expires_at', 'must be an ISO 8601 UTC timestamp ending in Z');
  const fields = match.slice(1, 7).map(Number);
  const [year, month, day, hour, minute, second] = fields as [number, number, number, number, number, number];
  const instant = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
  const exists =
    instant.getUTCFullYear() === year &&
    instant.getUTCMonth() === month - 1 &&
    instant.getUTCDate() === day &&
    instant.getUTCHours() === hour &&
    instant.getUTCMinutes() === minute &&
    instant.getUTCSeconds() === second;
  if (!exists) throw invalidParameter('expires_at', `${value} is not a date and time that exists`);
  if (Date.parse(value) <= now.getTime()) throw invalidParameter('expires_at', 'must be in the future');
}
