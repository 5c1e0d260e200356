import OpenAI from 'openai';
import { connectToRuntime } from '../../support/accounts';
import { startTestService, type TestService } from '../../support/local-service';

const MODEL = 'openai/gpt-4o-mini';
const weather = { type: 'function' as const, name: 'weather', description: 'Weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }, strict: false };

/** What a key has spent, in USD, as `GET /key` says. */
const spent = async (service: TestService, key: string) => (await service.call('/key', { key })).body.data.usage as number;

/**
 * `POST /responses`, OpenAI's Responses API, driven by the `openai` client: the same admission,
 * routing, limits and accounting as chat completions, in the Responses shapes; kept responses
 * read, continued and deleted by id within their organization.
 */
describe('the Responses API with the openai client', () => {
  let service: TestService;
  let client: OpenAI;

  beforeAll(async () => {
    service = await startTestService();
    client = new OpenAI({ apiKey: service.runtime.demo.keys.workspace, baseURL: service.runtime.baseUrl, maxRetries: 0 });
  });
  afterAll(() => service?.stop());

  it('answers a response, charged to the key as the same chat completion is, and keeps it for GET', async () => {
    const before = await spent(service, service.runtime.demo.keys.workspace);
    const response = await client.responses.create({ model: MODEL, instructions: 'Be brief.', input: 'one two three', metadata: { run: '7' } });
    expect(response).toMatchObject({ object: 'response', status: 'completed', model: MODEL, store: true, instructions: 'Be brief.', metadata: { run: '7' } });
    expect(response.id).toMatch(/^resp_/);
    expect(response.output_text).toBe('one two three');
    expect(response.output).toEqual([{ type: 'message', id: expect.stringMatching(/^msg_/), role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'one two three', annotations: [], logprobs: [] }] }]);
    expect(response.usage).toMatchObject({ output_tokens: 3, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } });
    const cost = (response.usage as unknown as { cost: number }).cost;
    expect((await spent(service, service.runtime.demo.keys.workspace)) - before).toBeCloseTo(cost, 12);
    // The same prompt as a chat completion costs the same.
    const chat = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'one two three' }] });
    expect((chat.usage as unknown as { cost: number }).cost).toBe(cost);
    const kept = await client.responses.retrieve(response.id);
    expect(kept).toMatchObject({ id: response.id, output: response.output, usage: response.usage });
  });

  it('streams the Responses events in order, a tool call, and continues it by previous_response_id', async () => {
    const stream = client.responses.stream({ model: MODEL, input: 'Weather in Paris?', tools: [weather], tool_choice: 'required' });
    const types: string[] = [];
    const numbers: number[] = [];
    stream.on('event', (event) => {
      types.push(event.type);
      numbers.push(event.sequence_number);
    });
    const final = await stream.finalResponse();
    expect(types.slice(0, 3)).toEqual(['response.created', 'response.in_progress', 'response.output_item.added']);
    expect(types).toContain('response.function_call_arguments.delta');
    expect(types.slice(-3)).toEqual(['response.function_call_arguments.done', 'response.output_item.done', 'response.completed']);
    expect(numbers).toEqual(numbers.map((_, i) => i));
    const call = final.output.find((item) => item.type === 'function_call');
    expect(call).toMatchObject({ type: 'function_call', name: 'weather', call_id: expect.any(String), arguments: expect.any(String) });
    const next = await client.responses.create({
      model: MODEL,
      previous_response_id: final.id,
      input: [{ type: 'function_call_output', call_id: call!.type === 'function_call' ? call!.call_id : '', output: 'sunny' }],
      tools: [weather],
    });
    expect(next).toMatchObject({ status: 'completed', previous_response_id: final.id });
    expect(next.output_text.length).toBeGreaterThan(0);
  });

  it('answers JSON of the schema text.format names, as responses.parse reads it', async () => {
    const schema = { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer', minimum: 2 } }, required: ['city', 'days'], additionalProperties: false };
    const parsed = await client.responses.parse({ model: MODEL, input: 'a forecast', text: { format: { type: 'json_schema', name: 'forecast', schema, strict: true } } });
    expect(parsed.output_parsed).toEqual({ city: expect.any(String), days: 2 });
    expect(parsed.text).toEqual({ format: { type: 'json_schema', name: 'forecast', schema, strict: true } });
  });

  it('keeps nothing where zero data retention applies (a guardrail enforcing it), and says so', async () => {
    const admin = service.runtime.demo.keys.managementReadWrite;
    const created = await service.call('/keys', { method: 'POST', key: admin, body: { name: 'zdr' } });
    const secret = created.body.key as string;
    const guardrail = await service.call('/guardrails', { method: 'POST', key: admin, body: { name: 'zdr only', enforce_zdr: true } });
    const assigned = await service.call(`/guardrails/${guardrail.body.data.id}/assignments/keys`, { method: 'POST', key: admin, body: { key_hashes: [created.body.data.hash] } });
    expect(assigned.status).toBe(200);
    // A model this key may reach: one with a zero-data-retention endpoint.
    const listed = await service.call('/models/user?limit=1&output_modalities=text', { key: secret });
    const model = listed.body.data[0].id as string;
    const zdr = new OpenAI({ apiKey: secret, baseURL: service.runtime.baseUrl, maxRetries: 0 });
    const answer = await zdr.responses.create({ model, input: 'private words' });
    expect((answer as unknown as { store: boolean }).store).toBe(false);
    await expect(zdr.responses.retrieve(answer.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it('keeps nothing with store false, and refuses to continue what is not kept, deleted or another organization’s', async () => {
    const unkept = await client.responses.create({ model: MODEL, input: 'a b', store: false });
    expect((unkept as unknown as { store: boolean }).store).toBe(false);
    await expect(client.responses.retrieve(unkept.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const refused = await client.responses.create({ model: MODEL, input: 'c', previous_response_id: unkept.id }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect(refused).toMatchObject({ status: 400, code: 'previous_response_not_found', param: 'previous_response_id' });

    const kept = await client.responses.create({ model: MODEL, input: 'a b' });
    const stores = connectToRuntime(service.runtime);
    try {
      const { organization } = await stores.accounts.createOrganization({ name: `Other ${kept.id.slice(-8)}`, plan: 'business' });
      const { secret } = await stores.accounts.createApiKey(organization.id, { kind: 'workspace', name: 'Other' } as never);
      const other = new OpenAI({ apiKey: secret, baseURL: service.runtime.baseUrl, maxRetries: 0 });
      await expect(other.responses.retrieve(kept.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
      await expect(other.responses.delete(kept.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
      await expect(other.responses.create({ model: MODEL, input: 'c', previous_response_id: kept.id })).rejects.toMatchObject({ code: 'previous_response_not_found' });
    } finally {
      stores.destroy();
    }
    await client.responses.delete(kept.id);
    await expect(client.responses.retrieve(kept.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(client.responses.delete(kept.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });
});
