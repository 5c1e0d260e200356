import { ACCESS_LEVELS, KEY_KINDS, type ApiKeyRecord } from '../../lambdas/accounts/types';
import { RESET_INTERVALS } from '../../lambdas/accounts/stored-limits';
import type { CommandSpec } from '../command';
import { UsageError } from '../errors';
import { capOrDash, fields, listOrDash, orDash, respond, table } from '../format';
import { keyView } from '../views';

const ORG_ARG = { name: 'org', help: 'organization id' };
/** The service's field names of a key's limit, by the flags that set them. */
const LIMIT_FLAGS = { limit: '--limit', limit_reset: '--limit-reset' };
const HASH_ARG = { name: 'hash', help: "the key's hash as key list shows it: its id, not the secret" };

/** Printed with every new key: only its hash is stored. */
export const ONE_TIME_SECRET_WARNING = 'The secret is shown only this once and cannot be recovered: store it now.';

function keyFields(key: ApiKeyRecord): (readonly [string, string])[] {
  return [
    ['Hash', key.hash],
    ['Label', key.label],
    ['Name', key.name],
    ['Kind', key.kind],
    ['Workspace', orDash(key.workspaceId)],
    ['Access', orDash(key.accessLevel)],
    ['User', orDash(key.userId)],
    ['Status', key.disabled ? 'disabled' : 'enabled'],
    ['Guardrails', listOrDash(key.guardrailIds)],
    ['Limit', capOrDash(key.limit, key.includeByokInLimit)],
    ['Expires', key.expiresAt ?? 'never'],
    ['Created', key.createdAt],
  ];
}

function setDisabled(disabled: boolean): CommandSpec {
  return {
    group: 'key',
    name: disabled ? 'disable' : 'enable',
    summary: disabled ? 'Disable a key: its next request is refused (401).' : 'Enable a disabled key again.',
    args: [ORG_ARG, HASH_ARG],
    parse(input) {
      const organizationId = input.arg('org');
      const hash = input.arg('hash');
      return async (ctx) => {
        const key = await ctx.accounts.updateApiKey(organizationId, hash, { disabled });
        respond(ctx, input, { data: keyView(key) }, () => [`${disabled ? 'Disabled' : 'Enabled'} key ${key.hash} (${key.name}).`]);
      };
    },
  };
}

/** The `key` commands: API keys, their limits, and whether they are enabled. */
export const keyCommands: CommandSpec[] = [
  {
    group: 'key',
    name: 'create',
    summary: 'Create an API key and print its secret, once.',
    description: [
      "Workspace keys call the models API in a workspace (default: the organization's first workspace). " +
        'Management keys call the management API (--access, default read-write). ' +
        'Personal keys belong to a user (--user) and act in a workspace.',
      `Only the key's hash is stored. ${ONE_TIME_SECRET_WARNING} With --json the secret is under "key" (and the warning goes to stderr).`,
    ],
    args: [ORG_ARG],
    options: {
      kind: { type: 'string', value: KEY_KINDS.join('|'), required: true, help: 'what the key is for' },
      name: { type: 'string', required: true, help: 'display name' },
      workspace: { type: 'string', value: 'id', help: 'workspace id (workspace and personal keys)' },
      access: { type: 'string', value: ACCESS_LEVELS.join('|'), help: 'management keys only (default read-write)' },
      user: { type: 'string', value: 'id', help: 'owning user id (personal keys, required for them)' },
      expires: { type: 'string', value: 'ISO time', help: 'expiry as a UTC timestamp, e.g. 2027-01-01T00:00:00Z' },
      limit: { type: 'string', value: 'usd', help: 'spending limit in USD (docs/limits.md)' },
      'limit-reset': { type: 'string', value: RESET_INTERVALS.join('|'), help: "the limit's window, from UTC midnight (weeks from Monday); all time when absent" },
      'include-byok': { type: 'boolean', help: 'count bring-your-own-key usage in the limit (stored and shown; no spend here is)' },
    },
    flagsByParameter: { workspace_id: '--workspace', access_level: '--access', user_id: '--user', expires_at: '--expires', ...LIMIT_FLAGS },
    parse(input) {
      const organizationId = input.arg('org');
      const request = {
        kind: input.requiredChoice('kind', KEY_KINDS),
        name: input.requiredString('name'),
        workspaceId: input.string('workspace'),
        accessLevel: input.choice('access', ACCESS_LEVELS),
        userId: input.string('user'),
        expiresAt: input.string('expires') ?? null,
        limit: input.usd('limit'),
        limitReset: input.choice('limit-reset', RESET_INTERVALS),
        ...(input.flag('include-byok') ? { includeByokInLimit: true } : {}),
      };
      return async (ctx) => {
        const { key, secret } = await ctx.accounts.createApiKey(organizationId, request);
        if (input.json) ctx.err(ONE_TIME_SECRET_WARNING);
        respond(ctx, input, { data: keyView(key), key: secret }, () => [
          `Created ${key.kind} key in organization ${organizationId}.`,
          ...fields([...keyFields(key), ['Secret', secret]]),
          '',
          ONE_TIME_SECRET_WARNING,
        ]);
      };
    },
  },
  {
    group: 'key',
    name: 'list',
    summary: "List an organization's keys, disabled ones included.",
    description: ['Oldest first. Secrets are never shown: a key is named by its hash, and its label shows the first and last characters only.'],
    args: [ORG_ARG],
    parse(input) {
      const organizationId = input.arg('org');
      return async (ctx) => {
        await ctx.accounts.getOrganization(organizationId);
        const keys = await ctx.accounts.listApiKeys(organizationId);
        respond(ctx, input, { data: keys.map((key) => keyView(key)) }, () =>
          keys.length === 0
            ? ['No keys.']
            : table(
                ['HASH', 'NAME', 'KIND', 'WORKSPACE', 'ACCESS', 'STATUS', 'EXPIRES', 'LABEL'],
                keys.map((k) => [
                  k.hash,
                  k.name,
                  k.kind,
                  orDash(k.workspaceId),
                  orDash(k.accessLevel),
                  k.disabled ? 'disabled' : 'enabled',
                  k.expiresAt ?? 'never',
                  k.label,
                ]),
              ),
        );
      };
    },
  },
  {
    group: 'key',
    name: 'update',
    summary: "Rename a key, or set or remove its spending limit.",
    description: [
      'What is not given stays as it is. A new amount keeps the limit\'s window; a new --limit-reset starts one. ' +
        '--limit none removes the limit (and its reset interval); --limit-reset none makes it count all time.',
    ],
    args: [ORG_ARG, HASH_ARG],
    options: {
      name: { type: 'string', help: 'display name' },
      limit: { type: 'string', value: 'usd|none', help: 'spending limit in USD, or none' },
      'limit-reset': { type: 'string', value: `${RESET_INTERVALS.join('|')}|none`, help: "the limit's window, or none for all time" },
      'include-byok': { type: 'string', value: 'on|off', help: 'count bring-your-own-key usage in the limit (stored and shown only)' },
    },
    flagsByParameter: LIMIT_FLAGS,
    parse(input) {
      const organizationId = input.arg('org');
      const hash = input.arg('hash');
      const reset = input.choice('limit-reset', [...RESET_INTERVALS, 'none'] as const);
      const change = {
        name: input.string('name'),
        limit: input.usd('limit', { orNone: true }),
        limitReset: reset === 'none' ? null : reset,
        includeByokInLimit: input.onOff('include-byok'),
      };
      if (Object.values(change).every((value) => value === undefined)) throw new UsageError('nothing to change: give --name, --limit, --limit-reset or --include-byok');
      return async (ctx) => {
        const key = await ctx.accounts.updateApiKey(organizationId, hash, change);
        respond(ctx, input, { data: keyView(key) }, () => [`Updated key ${key.hash}.`, ...fields(keyFields(key))]);
      };
    },
  },
  setDisabled(true),
  setDisabled(false),
  {
    group: 'key',
    name: 'delete',
    summary: 'Delete a key for good.',
    args: [ORG_ARG, HASH_ARG],
    parse(input) {
      const organizationId = input.arg('org');
      const hash = input.arg('hash');
      return async (ctx) => {
        await ctx.accounts.deleteApiKey(organizationId, hash);
        respond(ctx, input, { deleted: true }, () => [`Deleted key ${hash}.`]);
      };
    },
  },
];
