import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoAccountStore } from '../../lambdas/aws/dynamo-account-store';
import { ORGANIZATION_COPIES } from '../../lambdas/aws/copy-kinds';
import { createDocumentClient } from '../../lambdas/aws/dynamo-client';
import { CopiesAudit, needsRepair } from '../../lambdas/aws/dynamo-copies-audit';
import { TABLE_SCHEMAS } from '../../lambdas/aws/table-schemas';
import { startEmbeddedDynamoDb } from '../../local/embedded-dynamodb';
import { startLocalProcess, type LocalProcess } from '../support/local-process';

const WORKERS = 12;
/** Killed once this many changes have been answered, with the other workers' in flight. */
const ANSWERED_BEFORE_KILL = 40;

/**
 * `kill -9` of `npm start` while management changes of keys, guardrails and workspaces are in
 * flight, then the data as the next start finds it: every copy that requests read agrees with
 * the item management reads, and each call that was cut short, sent again, lands.
 */
describe('management changes after kill -9', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'modelgate-change-crash-'));
  let service: LocalProcess | undefined;
  afterAll(async () => {
    await service?.killHard();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('leaves no key or guardrail shown one way and enforced another, and calls sent again land', async () => {
    service = await startLocalProcess(dataDir);
    const { organizationId, workspaceId } = service;
    const call = async (method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> => {
      const response = await fetch(`${service!.baseUrl}${path}`, {
        method,
        headers: { Authorization: `Bearer ${service!.keys.managementReadWrite}`, 'Content-Type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: response.status, json: await response.json().catch(() => undefined) };
    };
    const created = await Promise.all(Array.from({ length: 6 }, (_, i) => call('POST', '/keys', { name: `worker ${i}` })));
    const hashes = created.map((answer) => answer.json.data.hash as string);
    const guardrail = (await call('POST', '/guardrails', { name: 'mistral only', allowed_providers: ['mistral'] })).json.data.id as string;

    // Each change, by round: disable or enable a key, assign or unassign the guardrail, change the guardrail, rename the workspace.
    const changes = (worker: number, round: number): [string, string, unknown] => {
      const hash = hashes[(worker + round) % hashes.length]!;
      switch (round % 5) {
        case 0:
          return ['PATCH', `/keys/${hash}`, { disabled: (worker + round) % 2 === 0 }];
        case 1:
          return ['POST', `/guardrails/${guardrail}/assignments/keys`, { key_hashes: [hash] }];
        case 2:
          return ['POST', `/guardrails/${guardrail}/assignments/keys/remove`, { key_hashes: [hash] }];
        case 3:
          return ['PATCH', `/guardrails/${guardrail}`, { description: `round ${round} of ${worker}` }];
        default:
          return ['PATCH', `/workspaces/${workspaceId}`, { description: `round ${round} of ${worker}` }];
      }
    };
    let answered = 0;
    let killed: Promise<void> | undefined;
    const cutShort: [string, string, unknown][] = [];
    const worker = async (index: number) => {
      for (let round = 0; !killed; round++) {
        const change = changes(index, round);
        const status = await call(...change).then(
          (answer) => answer.status,
          () => 0,
        );
        if (status === 0) cutShort.push(change);
        else expect({ change, status }).toEqual({ change, status: 200 });
        if (++answered >= ANSWERED_BEFORE_KILL) killed ??= service!.killHard();
      }
    };
    await Promise.all(Array.from({ length: WORKERS }, (_, i) => worker(i)));
    await killed;
    expect(cutShort.length).toBeGreaterThan(0);

    // The data as the next start finds it.
    await expectAgreementOnDisk(organizationId, workspaceId, hashes, guardrail);
    service = await startLocalProcess(dataDir);
    for (const change of cutShort) expect((await call(...change)).status).toBe(200);
    await service.killHard();
    await expectAgreementOnDisk(organizationId, workspaceId, hashes, guardrail);
  }, 180_000);

  /** Every copy in the data agrees with its item, and each record read through each copy is the one management reads. */
  async function expectAgreementOnDisk(organizationId: string, workspaceId: string, hashes: string[], guardrailId: string): Promise<void> {
    const dynamo = await startEmbeddedDynamoDb({ path: join(dataDir, 'dynamodb') });
    try {
      const documentClient = createDocumentClient(dynamo.client);
      const table = TABLE_SCHEMAS.keys.localName;
      const report = await new CopiesAudit(documentClient, table).check();
      expect({ report, needsRepair: needsRepair(report) }).toEqual({ report, needsRepair: false });
      const store = new DynamoAccountStore(documentClient, table);
      for (let copy = 0; copy < ORGANIZATION_COPIES; copy += 7) {
        const reader = new DynamoAccountStore(documentClient, table, { random: () => (copy + 0.5) / ORGANIZATION_COPIES });
        for (const hash of hashes) {
          expect((await reader.getRecords({ keyHash: hash })).key).toEqual(await store.getApiKey(hash));
        }
        expect((await reader.getRecords({ organizationId, workspaceId })).workspace).toEqual(await store.getWorkspace(organizationId, workspaceId));
        expect(await reader.getGuardrails(organizationId, [guardrailId])).toEqual([await store.getGuardrail(organizationId, guardrailId)]);
      }
    } finally {
      await dynamo.stop();
    }
  }
});
