import { BadRequestResponseError, NotFoundResponseError } from '@openrouter/sdk/models/errors';
import { BatchWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { hashApiKey } from '../../../lambdas/accounts/api-keys';
import { KEYS_PAGE } from '../../../lambdas/accounts/types';
import { TABLE_SCHEMAS } from '../../../lambdas/aws/table-schemas';
import { connectToRuntime } from '../../support/accounts';
import { useManagementSdk } from '../../support/management-sdk';

/**
 * The SDK parses every answer here. An unfiltered key list used to be refused: it held the
 * management keys' `workspace_id: null` (an unfiltered list is now the default workspace's, as
 * in the public API, and a management key's `workspace_id` names the default workspace, so
 * `apiKeys.get` of one parses too). Keys carry `external_user: null`, which the SDK requires: its
 * document is newer than the copy in test/fixtures.
 */
describe('the official SDK against the management API', () => {
  const api = useManagementSdk();
  const { raw } = api;

  describe('API keys: every answer parsed', () => {
    let hash: string;

    it('creates a key, and gets and updates it', async () => {
      const expiresAt = new Date(Date.now() + 86_400_000);
      const created = await api.sdk.apiKeys.create({ requestBody: { name: 'CI pipeline', workspaceId: api.workspaceId, expiresAt } });
      expect(created.key).toMatch(/^sk-mg-v1-/);
      expect(created.data).toMatchObject({ name: 'CI pipeline', workspaceId: api.workspaceId, disabled: false, externalUser: null, usage: 0, limit: null });
      expect(new Date(created.data.expiresAt!).toISOString()).toBe(expiresAt.toISOString());
      hash = created.data.hash;
      expect(hashApiKey(created.key)).toBe(hash);

      expect((await api.sdk.apiKeys.get({ hash })).data).toMatchObject({ hash, name: 'CI pipeline', workspaceId: api.workspaceId });
      const updated = await api.sdk.apiKeys.update({ hash, requestBody: { name: 'CI pipeline (paused)', disabled: true } });
      expect(updated.data).toMatchObject({ hash, name: 'CI pipeline (paused)', disabled: true });
      expect(updated.data.updatedAt).toEqual(expect.any(String));
      expect(api.requested).toEqual(['POST /keys', `GET /keys/${hash}`, `PATCH /keys/${hash}`]);
    });

    it('lists the keys of a workspace', async () => {
      const listed = await api.sdk.apiKeys.list({ workspaceId: api.workspaceId, includeDisabled: true });
      const hashes = listed.data.map((key) => key.hash);
      expect(hashes.sort()).toEqual([hash, hashApiKey(api.service.runtime.demo.keys.workspace), hashApiKey(api.service.runtime.demo.keys.personal)].sort());
      expect(api.requested).toEqual([`GET /keys?include_disabled=true&workspace_id=${api.workspaceId}`]);
    });

    it('answers a workspace of 1,001 keys in pages of 1,000, the SDK parsing each; offset 1,000 has the last', async () => {
      const workspace = (await api.sdk.workspaces.create({ createWorkspaceRequest: { name: 'Crowded', slug: 'crowded' } })).data.id;
      const organizationId = api.service.runtime.demo.organizationId;
      const hashes = Array.from({ length: KEYS_PAGE + 1 }, (_, i) => `6${i.toString(16).padStart(63, '0')}`);
      // As 1,001 creates would leave them: each key, its member item, the workspace's count.
      const items = hashes.flatMap((keyHash, i) => {
        const createdAt = new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString();
        const key = { hash: keyHash, organizationId, kind: 'workspace', workspaceId: workspace, accessLevel: null, userId: null, name: `k${i}`, label: 'sk-mg-v1-6...', disabled: false, guardrailIds: [], expiresAt: null, createdAt, updatedAt: null };
        return [
          { pk: `APIKEY#${keyHash}`, sk: 'APIKEY', gsi1pk: `ORG#${organizationId}#APIKEYS`, gsi1sk: `${createdAt}#${keyHash}`, ...key, revision: 1 },
          { pk: `ORG#${organizationId}`, sk: `WSKEY#${workspace}#${createdAt}#${keyHash}`, keyHash },
        ];
      });
      const { documentClient } = connectToRuntime(api.service.runtime);
      const table = TABLE_SCHEMAS.keys.localName;
      for (let start = 0; start < items.length; start += 25) {
        await documentClient.send(new BatchWriteCommand({ RequestItems: { [table]: items.slice(start, start + 25).map((Item) => ({ PutRequest: { Item } })) } }));
      }
      await documentClient.send(new UpdateCommand({ TableName: table, Key: { pk: `ORG#${organizationId}`, sk: `WORKSPACE#${workspace}` }, UpdateExpression: 'SET keyCount = :count', ExpressionAttributeValues: { ':count': KEYS_PAGE + 1 } }));

      const first = (await api.sdk.apiKeys.list({ workspaceId: workspace })).data;
      const last = (await api.sdk.apiKeys.list({ workspaceId: workspace, offset: KEYS_PAGE })).data;
      expect([first.length, first[0]?.hash, first.at(-1)?.hash]).toEqual([KEYS_PAGE, hashes[0], hashes[KEYS_PAGE - 1]]);
      expect(last.map((key) => key.hash)).toEqual([hashes[KEYS_PAGE]]);
      // Gone again, as deletes would leave it, so that the organization's other lists stay short.
      for (let start = 0; start < items.length; start += 25) {
        await documentClient.send(new BatchWriteCommand({ RequestItems: { [table]: items.slice(start, start + 25).map(({ pk, sk }) => ({ DeleteRequest: { Key: { pk, sk } } })) } }));
      }
      await documentClient.send(new UpdateCommand({ TableName: table, Key: { pk: `ORG#${organizationId}`, sk: `WORKSPACE#${workspace}` }, UpdateExpression: 'SET keyCount = :none', ExpressionAttributeValues: { ':none': 0 } }));
      await api.sdk.workspaces.delete({ id: workspace });
    }, 60_000);

    it("lists the default workspace's keys without a filter, parsed; every key, management keys too, only on request", async () => {
      const elsewhere = (await api.sdk.workspaces.create({ createWorkspaceRequest: { name: 'Elsewhere', slug: 'elsewhere' } })).data.id;
      const other = (await api.sdk.apiKeys.create({ requestBody: { name: 'Elsewhere CI', workspaceId: elsewhere } })).data.hash;
      api.requested = [];

      const listed = await api.sdk.apiKeys.list();
      expect(listed.data.map((key) => key.hash).sort()).toEqual([hashApiKey(api.service.runtime.demo.keys.workspace), hashApiKey(api.service.runtime.demo.keys.personal)].sort());
      expect(listed.data.every((key) => key.workspaceId === api.workspaceId)).toBe(true);
      expect((await api.sdk.apiKeys.list({ workspaceId: elsewhere })).data.map((key) => [key.hash, key.workspaceId])).toEqual([[other, elsewhere]]);
      expect(api.requested).toEqual(['GET /keys', `GET /keys?workspace_id=${elsewhere}`]);

      // The disabled key is left out without include_disabled.
      const management = [api.service.runtime.demo.keys.managementReadWrite, api.service.runtime.demo.keys.managementReadOnly].map(hashApiKey);
      const everything = (await raw('/keys?include_disabled=true&include_management=true')).data as { hash: string; kind: string; workspace_id: string }[];
      expect(everything.filter((key) => key.kind === 'management').map((key) => [key.hash, key.workspace_id])).toEqual(
        expect.arrayContaining(management.map((managementHash) => [managementHash, api.workspaceId])),
      );
      expect(everything.map((key) => key.hash)).toEqual(expect.arrayContaining([hash, other]));

      await api.sdk.apiKeys.delete({ hash: other });
      await api.sdk.workspaces.delete({ id: elsewhere });
    });

    it('skips keys with offset, oldest first; a negative or non-integer offset is a 400', async () => {
      const all = (await api.sdk.apiKeys.list({ includeDisabled: true })).data;
      expect(all.length).toBeGreaterThanOrEqual(3);
      api.requested = [];

      expect((await api.sdk.apiKeys.list({ includeDisabled: true, offset: 1 })).data).toEqual(all.slice(1));
      expect((await api.sdk.apiKeys.list({ offset: all.length })).data).toEqual([]);
      expect((await api.sdk.apiKeys.list({ offset: 0, workspaceId: api.workspaceId })).data).toEqual(all.filter((key) => !key.disabled));
      expect(api.requested).toEqual(['GET /keys?include_disabled=true&offset=1', `GET /keys?offset=${all.length}`, `GET /keys?offset=0&workspace_id=${api.workspaceId}`]);

      const negative = await api.sdk.apiKeys.list({ offset: -1 }).catch((error: unknown) => error);
      expect(negative).toBeInstanceOf(BadRequestResponseError);
      expect((negative as BadRequestResponseError).error).toEqual({
        code: 400,
        message: `Invalid offset: must be an integer from 0 to ${Number.MAX_SAFE_INTEGER}`,
        metadata: { parameter: 'offset' },
      });
      for (const value of ['1.5', 'one', '']) {
        const refused = await api.service.call(`/keys?offset=${value}`, { key: api.managementKey });
        expect([refused.status, refused.body.error.metadata]).toEqual([400, { parameter: 'offset' }]);
      }
    });

    it("gets and updates a management key, parsed: its workspace_id names the default workspace, as the public shape requires one", async () => {
      const created = await api.service.call('/keys', { key: api.managementKey, method: 'POST', body: { name: 'Provisioning', kind: 'management', access_level: 'read-only' } });
      const managementHash = created.body.data.hash as string;
      expect(created.body.data).toMatchObject({ kind: 'management', workspace_id: api.workspaceId });

      const read = await api.sdk.apiKeys.get({ hash: managementHash });
      expect(read.data).toMatchObject({ hash: managementHash, name: 'Provisioning', workspaceId: api.workspaceId, disabled: false, externalUser: null });
      const updated = await api.sdk.apiKeys.update({ hash: managementHash, requestBody: { name: 'Provisioning (old)' } });
      expect(updated.data).toMatchObject({ hash: managementHash, name: 'Provisioning (old)', workspaceId: api.workspaceId });
      // Still not a key of the default workspace's list.
      expect((await api.sdk.apiKeys.list({ workspaceId: api.workspaceId })).data.map((key) => key.hash)).not.toContain(managementHash);
      expect(await api.sdk.apiKeys.delete({ hash: managementHash })).toEqual({ deleted: true });
      expect(api.requested).toEqual([`GET /keys/${managementHash}`, `PATCH /keys/${managementHash}`, `GET /keys?workspace_id=${api.workspaceId}`, `DELETE /keys/${managementHash}`]);
    });

    it('deletes it: that answer is parsed', async () => {
      expect(await api.sdk.apiKeys.delete({ hash })).toEqual({ deleted: true });
      const gone = await api.sdk.apiKeys.get({ hash }).catch((error: unknown) => error);
      expect(gone).toBeInstanceOf(NotFoundResponseError);
    });
  });
});
