import { startTestService, type TestService } from '../../support/local-service';

describe('management API and bearer authentication on the local service', () => {
  let service: TestService;
  let keys: TestService['runtime']['demo']['keys'];
  beforeAll(async () => {
    service = await startTestService();
    keys = service.runtime.demo.keys;
  });
  afterAll(async () => {
    await service.stop();
  });

  const error = (code: number, message: string) => ({ error: { code, message } });

  it.each([
    ['no Authorization header', undefined, 'Missing Authentication header'],
    ['a malformed header', 'Token abc', 'Malformed Authorization header: expected "Bearer <API key>"'],
    ['an unknown key', `Bearer sk-mg-v1-${'0'.repeat(64)}`, 'Invalid API key'],
    ['a value that is not a key', 'Bearer hello', 'Invalid API key'],
  ])('answers %s with 401', async (_name, authorization, message) => {
    const response = await service.call('/workspaces', { headers: authorization ? { Authorization: authorization } : {} });
    expect(response.status).toBe(401);
    expect(response.body).toEqual(error(401, message));
  });

  it('refuses inference keys on management routes with 403', async () => {
    for (const key of [keys.workspace, keys.personal]) {
      const response = await service.call('/workspaces', { key });
      expect(response.status).toBe(403);
      expect(response.body).toEqual(error(403, 'Operation reserved for management keys'));
    }
  });

  it('refuses management keys on inference routes with 403', async () => {
    const response = await service.call('/chat/completions', {
      key: keys.managementReadWrite,
      method: 'POST',
      body: { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(response.status).toBe(403);
    expect(response.body).toEqual(error(403, 'Management keys cannot be used for inference'));
  });

  it('lets a read-only management key read but not write', async () => {
    const list = await service.call('/workspaces', { key: keys.managementReadOnly });
    expect(list.status).toBe(200);
    expect(list.body.total_count).toBe(1);
    expect(list.body.data[0]).toMatchObject({ id: service.runtime.demo.workspaceId, name: 'Default', slug: 'default' });
    const create = await service.call('/workspaces', { key: keys.managementReadOnly, method: 'POST', body: { name: 'Nope' } });
    expect(create.status).toBe(403);
    expect(create.body).toEqual(error(403, 'This management key is read-only'));
  });

  it('creates a key, shows its secret once, and cuts it off on the very next request once disabled or deleted', async () => {
    const created = await service.call('/keys', {
      key: keys.managementReadWrite,
      method: 'POST',
      body: { name: 'CI key', workspace_id: service.runtime.demo.workspaceId },
    });
    expect(created.status).toBe(201);
    const secret: string = created.body.key;
    expect(secret).toMatch(/^sk-mg-v1-[0-9a-f]{64}$/);
    const hash: string = created.body.data.hash;
    expect(created.body.data).toMatchObject({ name: 'CI key', kind: 'workspace', disabled: false, label: `${secret.slice(0, 12)}...${secret.slice(-4)}` });

    const listed = await service.call('/keys', { key: keys.managementReadOnly });
    expect(listed.text).not.toContain(secret);
    expect(listed.body.data.map((k: { hash: string }) => k.hash)).toContain(hash);

    expect((await service.call('/models/user?limit=1', { key: secret })).status).toBe(200);

    const disabled = await service.call(`/keys/${hash}`, { key: keys.managementReadWrite, method: 'PATCH', body: { disabled: true } });
    expect(disabled.status).toBe(200);
    expect(disabled.body.data.disabled).toBe(true);
    const refused = await service.call('/models/user?limit=1', { key: secret });
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual(error(401, 'API key is disabled'));
    expect((await service.call('/keys', { key: keys.managementReadOnly })).body.data.map((k: { hash: string }) => k.hash)).not.toContain(hash);
    expect((await service.call('/keys?include_disabled=true', { key: keys.managementReadOnly })).body.data.map((k: { hash: string }) => k.hash)).toContain(hash);

    await service.call(`/keys/${hash}`, { key: keys.managementReadWrite, method: 'PATCH', body: { disabled: false } });
    expect((await service.call('/models/user?limit=1', { key: secret })).status).toBe(200);

    const deleted = await service.call(`/keys/${hash}`, { key: keys.managementReadWrite, method: 'DELETE' });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ deleted: true });
    expect((await service.call('/models/user?limit=1', { key: secret })).status).toBe(401);
    expect((await service.call(`/keys/${hash}`, { key: keys.managementReadWrite })).status).toBe(404);
  });

  it('creates management and personal keys with their own rules', async () => {
    const readOnly = await service.call('/keys', {
      key: keys.managementReadWrite,
      method: 'POST',
      body: { name: 'auditor', kind: 'management', access_level: 'read-only' },
    });
    expect(readOnly.status).toBe(201);
    // A management key belongs to no workspace; the public key shape names the default one.
    expect(readOnly.body.data).toMatchObject({ kind: 'management', access_level: 'read-only', workspace_id: service.runtime.demo.workspaceId });
    const wrong = await service.call('/keys', {
      key: keys.managementReadWrite,
      method: 'POST',
      body: { name: 'x', kind: 'management', workspace_id: service.runtime.demo.workspaceId },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.metadata).toEqual({ parameter: 'workspace_id' });
    const personal = await service.call('/keys', { key: keys.managementReadWrite, method: 'POST', body: { name: 'p', kind: 'personal' } });
    expect(personal.status).toBe(400);
    expect(personal.body.error).toEqual({ code: 400, message: 'Invalid user_id: is required for a personal key', metadata: { parameter: 'user_id' } });
  });

  it.each([
    ['invalid JSON', '{"name":', 400, 'Request body is not valid JSON'],
    ['an array', '[]', 400, 'Request body must be a JSON object'],
    ['an unknown field', { name: 'a', colour: 'red' }, 400, 'Invalid colour: is not a known field'],
    ['a missing name', {}, 400, 'Invalid name: is required'],
    ['a bad kind', { name: 'a', kind: 'root' }, 400, 'Invalid kind: must be one of workspace, management, personal'],
    ['a non-UTC expiry', { name: 'a', expires_at: '2030-01-01T00:00:00+02:00' }, 400, 'Invalid expires_at: must be an ISO 8601 UTC timestamp ending in Z'],
    ['an unknown workspace', { name: 'a', workspace_id: '00000000-0000-4000-8000-000000000000' }, 404, 'Workspace 00000000-0000-4000-8000-000000000000 not found'],
    ['a workspace id that cannot exist', { name: 'a', workspace_id: 'nope' }, 400, 'Invalid workspace_id: must be a lowercase UUID'],
  ])('rejects a key request with %s', async (_name, body, status, message) => {
    const response = await service.call('/keys', { key: keys.managementReadWrite, method: 'POST', body });
    expect(response.status).toBe(status);
    expect(response.body.error.message).toBe(message);
    expect(response.body.error.code).toBe(status);
  });

  it('manages workspaces and guardrails, and assigns guardrails to keys', async () => {
    const workspace = await service.call('/workspaces', { key: keys.managementReadWrite, method: 'POST', body: { name: 'Production Apps' } });
    expect(workspace.status).toBe(201);
    expect(workspace.body.data).toMatchObject({ name: 'Production Apps', slug: 'production-apps', guardrail_ids: [] });
    const duplicate = await service.call('/workspaces', { key: keys.managementReadWrite, method: 'POST', body: { name: 'production apps' } });
    expect(duplicate.status).toBe(409);
    expect((await service.call(`/workspaces/${workspace.body.data.id}`, { key: keys.managementReadOnly })).body.data.id).toBe(workspace.body.data.id);

    const guardrail = await service.call('/guardrails', {
      key: keys.managementReadWrite,
      method: 'POST',
      body: { name: 'EU only', allowed_providers: ['mistral'], enforce_zdr: true },
    });
    expect(guardrail.status).toBe(201);
    const id = guardrail.body.data.id;
    // A workspace the organization does not have: the 404 the document declares for the route.
    const nowhere = await service.call('/guardrails', {
      key: keys.managementReadWrite,
      method: 'POST',
      body: { name: 'Nowhere', workspace_id: '00000000-0000-4000-8000-000000000000' },
    });
    expect([nowhere.status, nowhere.body.error.code]).toEqual([404, 404]);
    expect(guardrail.body.data).toMatchObject({ name: 'EU only', allowed_providers: ['mistral'], ignored_providers: null, enforce_zdr: true });

    const conflict = await service.call(`/guardrails/${id}`, {
      key: keys.managementReadWrite,
      method: 'PATCH',
      body: { ignored_providers: ['mistral'] },
    });
    expect(conflict.status).toBe(400);
    expect(conflict.body.error.message).toBe('Providers cannot be both allowed and ignored: mistral');
    // A guardrail is read on every request of its keys: its lists are bounded, item by item and together.
    const patch = (body: Record<string, unknown>) => service.call(`/guardrails/${id}`, { key: keys.managementReadWrite, method: 'PATCH', body });
    const long = await patch({ allowed_models: ['a'.repeat(129)] });
    expect([long.status, long.body.error.metadata?.parameter]).toEqual([400, 'allowed_models']);
    const ids = (prefix: string) => Array.from({ length: 50 }, (_, i) => `${prefix}/${String(i).padStart(3, '0')}-${'m'.repeat(104)}`);
    expect((await patch({ allowed_models: ids('a'), ignored_models: ids('b') })).status).toBe(200);
    const past = await patch({ allowed_models: ids('a'), ignored_models: ids('b').concat(ids('c')) });
    expect([past.status, past.body.error.message]).toEqual([400, 'Invalid ignored_models: the four model and provider lists may hold at most 16384 bytes together (UTF-8)']);
    expect((await service.call(`/guardrails/${id}`, { key: keys.managementReadOnly })).body.data.ignored_models).toEqual(ids('b'));

    const keyList = await service.call('/keys', { key: keys.managementReadOnly });
    const workspaceKey = keyList.body.data.find((k: { name: string }) => k.name === 'Demo workspace key').hash;
    const assigned = await service.call(`/guardrails/${id}/assignments/keys`, {
      key: keys.managementReadWrite,
      method: 'POST',
      body: { key_hashes: [workspaceKey] },
    });
    expect(assigned.body).toEqual({ assigned_count: 1 });
    const again = await service.call(`/guardrails/${id}/assignments/keys`, { key: keys.managementReadWrite, method: 'POST', body: { key_hashes: [workspaceKey] } });
    expect(again.body).toEqual({ assigned_count: 0 });
    const unknown = await service.call(`/guardrails/${id}/assignments/keys`, {
      key: keys.managementReadWrite,
      method: 'POST',
      body: { key_hashes: ['f'.repeat(64)] },
    });
    expect(unknown.status).toBe(404);

    const removed = await service.call(`/guardrails/${id}`, { key: keys.managementReadWrite, method: 'DELETE' });
    expect(removed.body).toEqual({ deleted: true });
    const keyAfter = await service.call(`/keys/${workspaceKey}`, { key: keys.managementReadOnly });
    expect(keyAfter.body.data.guardrail_ids).toEqual([]);
    expect((await service.call(`/guardrails/${id}`, { key: keys.managementReadOnly })).status).toBe(404);
  });
});
