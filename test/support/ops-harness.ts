import { readFileSync } from 'node:fs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { join } from 'node:path';
import { AccountsService } from '../../lambdas/accounts/accounts-service';
import { DynamoAccountStore } from '../../lambdas/aws/dynamo-account-store';
import { FederationService } from '../../lambdas/federation/federation-service';
import { DynamoCatalogStore } from '../../lambdas/aws/dynamo-catalog-store';
import { DynamoFederationStore } from '../../lambdas/aws/dynamo-federation-store';
import { TABLE_SCHEMAS } from '../../lambdas/aws/table-schemas';
import type { GlobalFlags } from '../../ops/command';
import { runOps } from '../../ops/run';
import { startEmbeddedTables } from './embedded-tables';
import { FixedClock } from './fixed-clock';

/**
 * The node arguments `npm run ops` runs (package.json's script less its leading `node`), then
 * `args`: for suites that run the CLI as its own process, as the operator does.
 */
export function opsProcessArgs(args: readonly string[]): string[] {
  const scripts = (JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  return [...scripts.ops!.split(' ').slice(1), ...args];
}

export interface OpsResult {
  code: number;
  stdout: string;
  stderr: string;
  /** The global flags the CLI connected with; undefined when it never connected. */
  connectedWith?: GlobalFlags;
}

export interface OpsHarness {
  accounts: AccountsService;
  store: DynamoAccountStore;
  /** The embedded tables' client, to leave items as another release would. */
  client: DynamoDBDocumentClient;
  catalog: DynamoCatalogStore;
  federation: FederationService;
  clock: FixedClock;
  /** Runs one CLI invocation in-process against the embedded tables. */
  run(...argv: string[]): Promise<OpsResult>;
  stop(): Promise<void>;
}

/**
 * The operator CLI over the real tables in an in-memory DynamoDB, with pinned time, ids
 * (`id-1`, `id-2`, ...) and key secrets (`sk-mg-v1-0101...`, `sk-mg-v1-0202...`), so
 * output can be asserted exactly.
 */
export async function startOpsHarness(): Promise<OpsHarness> {
  const tables = await startEmbeddedTables();
  const clock = new FixedClock();
  let ids = 0;
  let secrets = 0;
  let versions = 0;
  const store = new DynamoAccountStore(tables.documentClient, TABLE_SCHEMAS.keys.localName);
  const accounts = new AccountsService({
    store,
    clock,
    newId: () => `id-${++ids}`,
    random: (size) => Buffer.alloc(size, ++secrets),
  });
  const catalog = new DynamoCatalogStore(tables.documentClient, TABLE_SCHEMAS.models.localName, () => `v${++versions}`);
  let federationIds = 0;
  const federation = new FederationService({
    store: new DynamoFederationStore(tables.documentClient, TABLE_SCHEMAS.policies.localName, clock),
    accounts: store,
    hosts: { allowLoopback: false },
    clock,
    // Issuer and policy ids are UUIDs: 00000000-0000-4000-8000-000000000001, ...002, ...
    newId: () => federationUuid(++federationIds),
  });
  return {
    accounts,
    store,
    client: tables.documentClient,
    catalog,
    federation,
    clock,
    async run(...argv) {
      const stdout: string[] = [];
      const stderr: string[] = [];
      let connectedWith: GlobalFlags | undefined;
      const code = await runOps(argv, { out: (text) => stdout.push(text), err: (text) => stderr.push(text) }, async (flags) => {
        connectedWith = flags;
        return { accounts, catalog, federation };
      });
      const text = (lines: string[]) => (lines.length > 0 ? `${lines.join('\n')}\n` : '');
      return { code, stdout: text(stdout), stderr: text(stderr), connectedWith };
    },
    stop: () => tables.stop(),
  };
}

/** The secret the harness's nth key gets: 32 bytes of value n, in hex. */
export function harnessSecret(n: number): string {
  return `sk-mg-v1-${Buffer.alloc(32, n).toString('hex')}`;
}

/** The id the harness gives its nth issuer or policy. */
export function federationUuid(n: number): string {
  return `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
}
