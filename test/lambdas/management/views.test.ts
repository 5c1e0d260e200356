import type { ApiKeyRecord } from '../../../lambdas/accounts/types';
import { keyView, limitRemaining } from '../../../lambdas/management/views';

const KEY: ApiKeyRecord = {
  hash: 'a'.repeat(64),
  organizationId: 'org',
  kind: 'workspace',
  workspaceId: 'ws',
  accessLevel: null,
  userId: null,
  name: 'CI',
  label: 'sk-mg-v1-aaa...aaaa',
  disabled: false,
  guardrailIds: [],
  expiresAt: null,
  createdAt: '2026-11-01T00:00:00.000Z',
  updatedAt: null,
};
const SINCE = '2026-11-01T00:00:00.000Z';
const USAGE = { usage: 40, daily: 0.1, weekly: 2.2, monthly: 9 };

describe("a key's limit on the wire (docs/limits.md)", () => {
  it.each([
    ['daily', 0.1, 9.9],
    ['weekly', 2.2, 7.8],
    ['monthly', 9, 1],
    [null, 40, 0],
  ] as const)('counts a %s limit against that window\'s usage (%s spent of 10)', (reset, _spent, remaining) => {
    expect(limitRemaining({ amountUsd: '10', reset, since: SINCE }, USAGE)).toBe(remaining);
  });

  it('subtracts exactly, and never goes below 0', () => {
    expect(limitRemaining({ amountUsd: '0.3', reset: 'daily', since: SINCE }, { ...USAGE, daily: 0.1 })).toBe(0.2);
    expect(limitRemaining({ amountUsd: '0.000001', reset: 'daily', since: SINCE }, { ...USAGE, daily: 0.00000225 })).toBe(0);
    expect(limitRemaining({ amountUsd: '5', reset: 'daily', since: SINCE }, { ...USAGE, daily: 5 })).toBe(0);
    expect(limitRemaining({ amountUsd: '5', reset: 'daily', since: SINCE }, { ...USAGE, daily: 1e-7 })).toBe(4.9999999);
  });

  it('shows the limit fields of a key with a limit, and nulls and false without one', () => {
    const limited = keyView({ ...KEY, limit: { amountUsd: '12.5', reset: 'weekly', since: SINCE }, includeByokInLimit: true }, USAGE);
    expect(limited).toMatchObject({ limit: 12.5, limit_remaining: 10.3, limit_reset: 'weekly', include_byok_in_limit: true, usage_weekly: 2.2 });

    for (const key of [KEY, { ...KEY, limit: null }]) {
      expect(keyView(key, USAGE)).toMatchObject({ limit: null, limit_remaining: null, limit_reset: null, include_byok_in_limit: false });
    }
  });
});
