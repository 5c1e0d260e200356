import { randomUUID } from 'node:crypto';
import { AccountsService } from '../../../lambdas/accounts/accounts-service';
import { DynamoAccountStore } from '../../../lambdas/aws/dynamo-account-store';
import { TABLE_SCHEMAS } from '../../../lambdas/aws/table-schemas';
import { useAccountStoreTables } from '../../support/embedded-tables';
import { guardrailInput } from '../../support/accounts';

describe('DynamoAccountStore on the embedded DynamoDB', () => {
  const db = useAccountStoreTables();


  describe('spending caps, each change computed from a fresh read (docs/limits.md)', () => {
    /** A second container: its own store, so its writes do not wait for this one's turn. */
    const otherContainer = () => new AccountsService({ store: new DynamoAccountStore(db.tables.documentClient, TABLE_SCHEMAS.keys.localName), clock: db.clock, newId: () => randomUUID() });

    it("lands a workspace's budgets of different intervals set at once by two containers, and the copies requests read show them", async () => {
      const { organization, workspace } = await db.service.createOrganization({ name: 'Budgets', plan: 'enterprise' });
      const other = otherContainer();

      for (let round = 0; round < 5; round++) {
        await Promise.all([
          db.service.putWorkspaceBudget(organization.id, workspace.slug, 'daily', { limitUsd: 1 + round }),
          other.putWorkspaceBudget(organization.id, workspace.slug, 'monthly', { limitUsd: 100 + round, includeByokInBudgets: round % 2 === 0 }),
        ]);

        const stored = await db.store.getWorkspace(organization.id, workspace.id);
        expect([stored?.budgets?.daily?.amountUsd, stored?.budgets?.monthly?.amountUsd, stored?.includeByokInBudgets]).toEqual([`${1 + round}`, `${100 + round}`, round % 2 === 0]);
        const { workspace: copy } = await db.store.getRecords({ organizationId: organization.id, workspaceId: workspace.id });
        expect(copy?.budgets).toEqual(stored?.budgets);
      }
      await Promise.all([db.service.deleteWorkspaceBudget(organization.id, workspace.slug, 'daily'), other.deleteWorkspaceBudget(organization.id, workspace.slug, 'monthly')]);
      expect((await db.store.getWorkspace(organization.id, workspace.id))?.budgets).toEqual({});
    });

    it("keeps both of two containers' changes of one key's limit: a new amount and a new interval", async () => {
      const { organization } = await db.service.createOrganization({ name: 'Limits', plan: 'enterprise' });
      const { key } = await db.service.createApiKey(organization.id, { kind: 'workspace', name: 'Capped', limit: 5, limitReset: 'daily' });
      const created = db.clock.now().toISOString();
      expect(key.limit).toEqual({ amountUsd: '5', reset: 'daily', since: created });
      db.clock.advance(60_000);

      await Promise.all([
        db.service.updateApiKey(organization.id, key.hash, { limit: 7.5 }),
        otherContainer().updateApiKey(organization.id, key.hash, { limitReset: 'monthly', includeByokInLimit: true }),
      ]);

      const stored = await db.store.getApiKey(key.hash);
      expect([stored?.limit?.amountUsd, stored?.limit?.reset, stored?.includeByokInLimit]).toEqual(['7.5', 'monthly', true]);
      // The interval changed once, at this time: its window starts then, whichever write came first.
      expect(stored?.limit?.since).toBe(db.clock.now().toISOString());
      expect((await db.store.getRecords({ keyHash: key.hash })).key?.limit).toEqual(stored?.limit);
    });

    it("keeps a guardrail budget's window across a concurrent change of something else", async () => {
      const { organization } = await db.service.createOrganization({ name: 'Guardrail budgets', plan: 'enterprise' });
      const input = guardrailInput({ name: 'Budget' });
      const created = await db.service.createGuardrail(organization.id, { ...input, budget: { amount: 20, reset: 'weekly' } });
      const since = db.clock.now().toISOString();
      db.clock.advance(60_000);

      await Promise.all([
        db.service.updateGuardrail(organization.id, created.id, { budget: { amount: 25 } }),
        otherContainer().updateGuardrail(organization.id, created.id, { enforceZdr: true }),
      ]);

      expect(await db.store.getGuardrail(organization.id, created.id)).toMatchObject({ enforceZdr: true, budget: { amountUsd: '25', reset: 'weekly', since }, version: 3 });
    });
  });
});
