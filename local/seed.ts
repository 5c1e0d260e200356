import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AccountsService } from '../lambdas/accounts/accounts-service';
import type { AccountStore } from '../lambdas/accounts/account-store';
import { hashApiKey } from '../lambdas/accounts/api-keys';
import type { CatalogStore } from '../lambdas/catalog/catalog-store';
import { deriveCatalogEntries } from './seed-endpoints';
import type { PublicModel } from '../lambdas/catalog/types';
import { readJsonFile, writeFileAtomically } from './files';

/** The repository's `data/` folder: the public catalog snapshot, endpoints and model stats the demo catalog is seeded from. */
export const DATA_DIR = join(__dirname, '..', 'data');

/** The demo organization's credentials, as `.local/demo.json` holds them (docs/architecture.md, the local runtime). */
export interface DemoCredentials {
  baseUrl: string;
  organizationId: string;
  workspaceId: string;
  keys: { workspace: string; managementReadWrite: string; managementReadOnly: string; personal: string };
}

function readJson<T>(file: string): T {
  return JSON.parse(readFileSync(join(DATA_DIR, file), 'utf8')) as T;
}

/** The public snapshot with demo endpoints derived from it (docs/api.md: demo data, not real policy). */
export function snapshotCatalog() {
  const models = readJson<{ data: PublicModel[] }>('catalog-snapshot.json').data;
  return deriveCatalogEntries(models, {
    endpoints: readJson<{ endpoints: Parameters<typeof deriveCatalogEntries>[1]['endpoints'] }>('endpoints-excerpt.json').endpoints,
    stats: readJson<Parameters<typeof deriveCatalogEntries>[1]['stats']>('model-stats.json'),
  });
}

/** Seeds the catalog from the snapshot unless one has been imported already. */
export async function seedCatalog(store: CatalogStore): Promise<number> {
  if ((await store.version()) !== undefined) return 0;
  const entries = snapshotCatalog();
  await store.putEntries(entries.map((entry, position) => ({ position, entry })));
  return entries.length;
}

/**
 * Makes sure the demo organization (enterprise plan, one workspace, one key of each kind)
 * exists. Credentials from an earlier run are reused while every key still authenticates;
 * otherwise a new organization is created and the file rewritten.
 */
export async function ensureDemoOrganization(
  service: AccountsService,
  accounts: AccountStore,
  file: string,
  baseUrl: string,
  warn: (message: string) => void = (message) => console.warn(message),
): Promise<DemoCredentials> {
  const previous = readPreviousDemo(file, warn);
  if (previous && (await stillValid(previous, accounts))) {
    const demo = { ...previous, baseUrl };
    writeDemo(file, demo);
    return demo;
  }
  const { organization, workspace } = await service.createOrganization({ name: 'Demo Organization', plan: 'enterprise' });
  const user = await service.createUser(organization.id, { email: 'demo@example.com', name: 'Demo User' });
  const create = async (input: Parameters<AccountsService['createApiKey']>[1]) =>
    (await service.createApiKey(organization.id, input)).secret;
  const demo: DemoCredentials = {
    baseUrl,
    organizationId: organization.id,
    workspaceId: workspace.id,
    keys: {
      workspace: await create({ kind: 'workspace', name: 'Demo workspace key', workspaceId: workspace.id }),
      managementReadWrite: await create({ kind: 'management', name: 'Demo management key', accessLevel: 'read-write' }),
      managementReadOnly: await create({ kind: 'management', name: 'Demo read-only management key', accessLevel: 'read-only' }),
      personal: await create({ kind: 'personal', name: 'Demo personal key', userId: user.id, workspaceId: workspace.id }),
    },
  };
  writeDemo(file, demo);
  return demo;
}

/**
 * The credentials of an earlier run, or undefined. A file that is not the JSON object it
 * should be (truncated by a crash, edited by hand) is reported and replaced, not fatal.
 */
function readPreviousDemo(file: string, warn: (message: string) => void): DemoCredentials | undefined {
  const read = readJsonFile(file);
  if (read.status === 'missing') return undefined;
  if (read.status === 'damaged' || !isDemoShape(read.value)) {
    warn(`${file} is damaged (${read.status === 'damaged' ? read.reason : 'not the demo credentials object'}): creating a new demo organization and rewriting it`);
    return undefined;
  }
  return read.value;
}

function isDemoShape(value: unknown): value is DemoCredentials {
  const demo = value as Partial<DemoCredentials> | null;
  return (
    typeof demo === 'object' &&
    demo !== null &&
    typeof demo.organizationId === 'string' &&
    typeof demo.workspaceId === 'string' &&
    typeof demo.keys === 'object' &&
    demo.keys !== null
  );
}

async function stillValid(demo: DemoCredentials, accounts: AccountStore): Promise<boolean> {
  const secrets = Object.values(demo.keys);
  if (secrets.length !== 4 || secrets.some((secret) => typeof secret !== 'string')) return false;
  for (const secret of secrets) {
    const key = await accounts.getApiKey(hashApiKey(secret));
    if (!key || key.disabled || key.organizationId !== demo.organizationId) return false;
  }
  return true;
}

function writeDemo(file: string, demo: DemoCredentials): void {
  // The file holds secrets: owner-only.
  writeFileAtomically(file, `${JSON.stringify(demo, null, 2)}\n`, 0o600);
}
