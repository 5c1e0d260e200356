import { GUARDRAIL_LIMITS } from '../../../lambdas/accounts/types';
import { snapshotCatalog } from '../../../local/seed';
import { runOps } from '../../../ops/run';
import { connectToRuntime, type RuntimeStores } from '../../support/accounts';
import { startTestService, type TestService } from '../../support/local-service';

/**
 * Lost updates under concurrency, through real HTTP on the local service (the operator
 * CLI for workspace attachments, which have no HTTP route): every request of a parallel
 * burst must find its write in the final state, and counts must be real changes.
 */
describe('concurrent writes on the local service', () => {
  const PARALLEL = 20;
  /** The most guardrails one key or workspace holds. */
  const HELD = GUARDRAIL_LIMITS.perHolder;
  let service: TestService;
  let stores: RuntimeStores;
  let demo: TestService['runtime']['demo'];
  beforeAll(async () => {
    service = await startTestService();
    stores = connectToRuntime(service.runtime);
    demo = service.runtime.demo;
  });
  afterAll(async () => {
    stores.destroy();
    await service.stop();
  });

  const manage = (path: string, method = 'GET', body?: unknown) => service.call(path, { key: demo.keys.managementReadWrite, method, body });
  const times = <T>(n: number, make: (i: number) => Promise<T>) => Promise.all(Array.from({ length: n }, (_, i) => make(i)));

  async function newGuardrail(name: string, ignoredModel = `acme/${name}`): Promise<string> {
    const response = await manage('/guardrails', 'POST', { name, ignored_models: [ignoredModel] });
    expect(response.status).toBe(201);
    return response.body.data.id;
  }

  async function newKey(name: string): Promise<string> {
    return (await newKeyWithSecret(name)).hash;
  }

  async function newKeyWithSecret(name: string): Promise<{ hash: string; secret: string }> {
    const response = await manage('/keys', 'POST', { name });
    expect(response.status).toBe(201);
    return { hash: response.body.data.hash, secret: response.body.key };
  }

  /**
   * A burst split around a deletion: a quarter sent and answered before it, half sent with it
   * (the race), the rest sent once it is answered. Ordered by the answers, not by timers.
   */
  const aroundDeletion = <T>(all: readonly T[]) => ({ before: all.slice(0, all.length / 4), during: all.slice(all.length / 4, (3 * all.length) / 4), after: all.slice((3 * all.length) / 4) });

  const guardrailsOf = async (hash: string): Promise<string[]> => {
    const response = await manage(`/keys/${hash}`);
    expect([response.status, response.body.error]).toEqual([200, undefined]);
    return response.body.data.guardrail_ids;
  };

  describe('guardrail assignments to keys', () => {
    it(`keeps every one of ${PARALLEL} guardrails assigned to one key at the same moment that fits: ${HELD}, the rest a 400`, async () => {
      const { hash: key, secret } = await newKeyWithSecret('target');
      const models = snapshotCatalog().slice(0, PARALLEL).map((entry) => entry.model.id);
      const ids = await times(PARALLEL, (i) => newGuardrail(`parallel-${i}`, models[i]));

      const responses = await times(PARALLEL, (i) => manage(`/guardrails/${ids[i]}/assignments/keys`, 'POST', { key_hashes: [key] }));

      const landed = ids.filter((_, i) => responses[i]!.status === 200);
      expect(responses.filter((r) => r.status === 200).map((r) => r.body)).toEqual(Array(HELD).fill({ assigned_count: 1 }));
      expect(responses.filter((r) => r.status !== 200).map((r) => [r.status, r.body.error.metadata])).toEqual(Array(PARALLEL - HELD).fill([400, { parameter: 'key_hashes' }]));
      expect(await guardrailsOf(key)).toEqual([...landed].sort());
      // The key is as restricted as the operator was told: no model of a guardrail it holds is listed.
      const listed = await service.call('/models/user?output_modalities=all', { key: secret });
      expect(listed.status).toBe(200);
      const restricted = models.filter((_, i) => responses[i]!.status === 200);
      expect(listed.body.data.map((model: { id: string }) => model.id).filter((id: string) => restricted.includes(id))).toEqual([]);
    });

    it('counts one real change when the same assignment is sent many times at once', async () => {
      const key = await newKey('same');
      const id = await newGuardrail('same');

      const responses = await times(PARALLEL, () => manage(`/guardrails/${id}/assignments/keys`, 'POST', { key_hashes: [key] }));

      expect(responses.every((r) => r.status === 200)).toBe(true);
      expect(responses.map((r) => r.body.assigned_count).sort()).toEqual([...Array(PARALLEL - 1).fill(0), 1]);
      expect(await guardrailsOf(key)).toEqual([id]);
    });

    it(`removes each of ${HELD} guardrails removed twice at the same moment, and none twice`, async () => {
      const key = await newKey('unassign');
      const ids = await times(HELD, (i) => newGuardrail(`unassign-${i}`));
      for (const id of ids) await manage(`/guardrails/${id}/assignments/keys`, 'POST', { key_hashes: [key] });

      const responses = await times(HELD * 2, (i) => manage(`/guardrails/${ids[i % HELD]}/assignments/keys/remove`, 'POST', { key_hashes: [key] }));

      expect(responses.every((r) => r.status === 200)).toBe(true);
      expect(responses.reduce((sum, r) => sum + r.body.unassigned_count, 0)).toBe(HELD);
      expect(await guardrailsOf(key)).toEqual([]);
    });

    it('leaves no deleted guardrail id on any key, whichever of assignment and deletion comes first', async () => {
      const keys = await times(PARALLEL, (i) => newKey(`race-${i}`));
      const assign = (id: string, hashes: string[]) => manage(`/guardrails/${id}/assignments/keys`, 'POST', { key_hashes: hashes });
      for (let round = 0; round < 3; round++) {
        const id = await newGuardrail(`doomed-${round}`);
        const { before, during, after } = aroundDeletion(keys);
        // Assignments one key each: some before the deletion, some sent with it, the rest after
        // it; in the last round also one request naming every key, sent with it.
        const early = await Promise.all(before.map((hash) => assign(id, [hash])));
        const racing = during.map((hash) => assign(id, [hash]));
        if (round === 2) racing.push(assign(id, keys));
        const [deleted, ...raced] = await Promise.all([manage(`/guardrails/${id}`, 'DELETE'), ...racing]);
        const late = await Promise.all(after.map((hash) => assign(id, [hash])));

        expect(deleted.status).toBe(200);
        expect(early.map((r) => r.status)).toEqual(before.map(() => 200));
        // Each assignment sent with the deletion either happened before it (200) or found the guardrail gone (404).
        expect(raced.every((r) => r.status === 200 || r.status === 404)).toBe(true);
        expect(late.map((r) => r.status)).toEqual(after.map(() => 404));
        const dangling = (await times(keys.length, (i) => guardrailsOf(keys[i]!))).filter((ids) => ids.includes(id));
        expect(dangling).toEqual([]);
      }
    }, 120_000);
  });

  describe('guardrail attachments to workspaces, through the operator CLI', () => {
    const ops = (...argv: string[]) =>
      runOps(argv, { out: () => undefined, err: () => undefined }, async () => ({ accounts: stores.accounts, catalog: stores.catalog }));

    it(`keeps every one of ${PARALLEL} guardrails attached to one workspace at the same moment that fits: ${HELD}, the rest refused`, async () => {
      const workspace = await manage('/workspaces', 'POST', { name: 'Attach target' });
      const ids = await times(PARALLEL, (i) => newGuardrail(`workspace-${i}`));

      const codes = await times(PARALLEL, (i) => ops('guardrail', 'attach-workspace', demo.organizationId, ids[i]!, workspace.body.data.id));

      // The workspace's default guardrail, written with it, holds one of the places.
      const held = (await manage(`/workspaces/${workspace.body.data.id}`)).body.data.guardrail_ids as string[];
      const landed = ids.filter((_, i) => codes[i] === 0);
      expect([landed.length, codes.filter((code) => code === 2).length]).toEqual([HELD - (held.length - landed.length), PARALLEL - landed.length]);
      expect(held.filter((id) => ids.includes(id))).toEqual([...landed].sort());
      expect(held).toHaveLength(HELD);

      const detached = await times(landed.length, (i) => ops('guardrail', 'detach-workspace', demo.organizationId, landed[i]!, workspace.body.data.id));
      expect(detached).toEqual(landed.map(() => 0));
      expect((await manage(`/workspaces/${workspace.body.data.id}`)).body.data.guardrail_ids).toEqual([]);
    });

    it('leaves no deleted guardrail id on a workspace attached while the guardrail is deleted', async () => {
      const workspaces = (await times(PARALLEL, (i) => manage('/workspaces', 'POST', { name: `Race ${i}` }))).map((w) => w.body.data.id as string);
      const attach = (id: string, workspace: string) => ops('guardrail', 'attach-workspace', demo.organizationId, id, workspace);
      for (let round = 0; round < 3; round++) {
        const id = await newGuardrail(`doomed-workspace-${round}`);
        const { before, during, after } = aroundDeletion(workspaces);
        const early = await Promise.all(before.map((workspace) => attach(id, workspace)));
        const racing = during.map((workspace) => attach(id, workspace));
        const [deleted, ...raced] = await Promise.all([manage(`/guardrails/${id}`, 'DELETE'), ...racing]);
        const late = await Promise.all(after.map((workspace) => attach(id, workspace)));

        expect(deleted.status).toBe(200);
        // Exit 0 when attached before the deletion, 1 (guardrail not found) after it.
        expect(early).toEqual(before.map(() => 0));
        expect(raced.every((code) => code === 0 || code === 1)).toBe(true);
        expect(late).toEqual(after.map(() => 1));
        const listed = (await manage('/workspaces')).body.data as { guardrail_ids: string[] }[];
        expect(listed.filter((w) => w.guardrail_ids.includes(id))).toEqual([]);
      }
    }, 120_000);
  });

  describe('workspace slugs', () => {
    it(`gives one slug to one of ${PARALLEL} workspaces created with the same name at the same moment`, async () => {
      const responses = await times(PARALLEL, () => manage('/workspaces', 'POST', { name: 'Same Name' }));

      expect(responses.map((r) => r.status).sort()).toEqual([201, ...Array(PARALLEL - 1).fill(409)]);
      // A loser finds the slug taken, or, before the winner has written its workspace, held by that write.
      for (const refused of responses.filter((r) => r.status === 409)) {
        expect(refused.body).toEqual(
          refused.body.error.metadata
            ? {
                error: {
                  code: 409,
                  message: `The slug "same-name" is held by a write that has not finished: free again at ${refused.body.error.metadata.free_at} unless that write completes`,
                  metadata: { free_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$/) },
                },
              }
            : { error: { code: 409, message: 'A workspace with slug "same-name" already exists' } },
        );
      }
      const listed = (await manage('/workspaces')).body.data as { slug: string }[];
      expect(listed.filter((w) => w.slug === 'same-name')).toHaveLength(1);
    });

    it.each([
      ['a path', '../../etc'],
      ['a space', 'A B'],
      ['upper case', 'Prod'],
      ['a NUL character', 'default\u0000'],
      ['an emoji', 'rocket-\u{1F680}'],
      ['a leading hyphen', '-prod'],
      ['65 characters', 'a'.repeat(65)],
    ])('refuses an explicit slug with %s', async (_name, slug) => {
      const response = await manage('/workspaces', 'POST', { name: 'Explicit', slug });
      expect(response.status).toBe(400);
      expect(response.body).toEqual({
        error: {
          code: 400,
          message: 'Invalid slug: must be 1 to 64 lowercase letters, digits and hyphens, starting with a letter or digit',
          metadata: { parameter: 'slug' },
        },
      });
    });

    it('accepts an explicit slug of the documented shape', async () => {
      const response = await manage('/workspaces', 'POST', { name: 'Explicit', slug: `0-${'a'.repeat(62)}` });
      expect(response.status).toBe(201);
      expect(response.body.data.slug).toBe(`0-${'a'.repeat(62)}`);
    });
  });
});
