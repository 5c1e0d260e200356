import { systemClock } from '../../lambdas/clock';
import { newestActive } from '../../lambdas/signing/active-signer';
import type { SigningKeyRecord } from '../../lambdas/signing/signer';
import { registerSigningKey } from '../../lambdas/signing/signing-key-registry';
import type { CommandSpec, OpsContext } from '../command';
import { OperationError } from '../errors';
import { orDash, respond, table } from '../format';

/** How long after retirement a key stays published: the longest access-token lifetime (docs/reference.md#limits). */
const PUBLISHED_AFTER_RETIREMENT_MS = 15 * 60 * 1000;

function signingKeysOf(ctx: OpsContext) {
  if (!ctx.signingKeys) throw new OperationError('this target has no signing keys to manage');
  return ctx.signingKeys;
}

function recordView(record: SigningKeyRecord) {
  return { kid: record.kid, status: record.status, key_ref: record.keyRef, created_at: record.createdAt, retired_at: record.retiredAt };
}

/** `signing-key rotate` and `signing-key list`: the keys that sign access tokens. */
export const signingKeyCommands: CommandSpec[] = [
  {
    group: 'signing-key',
    name: 'rotate',
    summary: 'Create a new access-token signing key, publish it, and retire the active one.',
    description: [
      'Locally a new key file in the data directory; on AWS a new KMS key made like the active one',
      '(ECC_NIST_P256, the same key policy and tags, so the token exchange may sign with it).',
      'The new key is published in the JWKS within 5 seconds and signs within 30 seconds in running',
      'functions and the running local service. The retired key stays published for 15 minutes,',
      'so tokens it signed keep verifying until they expire.',
    ],
    parse(input) {
      return async (ctx) => {
        const keys = signingKeysOf(ctx);
        const before = newestActive(await keys.store.list());
        const created = await keys.createKey(before);
        const result = await registerSigningKey(keys.store, created, systemClock);
        const publishedUntil = (record: SigningKeyRecord) =>
          new Date(Date.parse(record.retiredAt!) + PUBLISHED_AFTER_RETIREMENT_MS).toISOString();
        respond(ctx, input, { active: recordView(result.active), retired: result.retired.map(recordView) }, () => [
          `New signing key ${result.active.kid} (${result.active.keyRef}) is published and signs within 30 seconds.`,
          ...result.retired.map((record) => `Retired ${record.kid}: still published until ${publishedUntil(record)}.`),
        ]);
      };
    },
  },
  {
    group: 'signing-key',
    name: 'list',
    summary: 'List the access-token signing keys: the active one and the retired ones.',
    parse(input) {
      return async (ctx) => {
        const records = (await signingKeysOf(ctx).store.list()).sort((a, b) => b.createdAt.localeCompare(a.createdAt));
        respond(ctx, input, { data: records.map(recordView) }, () =>
          table(
            ['KID', 'STATUS', 'CREATED', 'RETIRED', 'KEY'],
            records.map((r) => [r.kid, r.status, r.createdAt, orDash(r.retiredAt), r.keyRef]),
          ),
        );
      };
    },
  },
];
