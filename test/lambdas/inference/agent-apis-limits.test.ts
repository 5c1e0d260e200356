import Anthropic from '@anthropic-ai/sdk';
import { randomUUID } from 'node:crypto';
import OpenAI from 'openai';
import { startTestService, type TestService } from '../../support/local-service';

const MODEL = 'openai/gpt-4o-mini';

/**
 * One key's spending limit across the three APIs (docs/limits.md): chat completions, the
 * Messages API and the Responses API draw on one ledger, so requests in any mix stop at the
 * same cap, each refusal a 402 in its API's shape that its client raises as such.
 */
describe('one spending limit across chat completions, /messages and /responses', () => {
  let service: TestService;
  const admin = () => service.runtime.demo.keys.managementReadWrite;
  const newKey = async (limit: number) => {
    const created = await service.call('/keys', { method: 'POST', key: admin(), body: { name: `limited ${randomUUID().slice(0, 8)}`, limit } });
    expect(created.status).toBe(201);
    return created.body.key as string;
  };
  const clients = (key: string) => {
    const base = service.runtime.baseUrl;
    const openai = new OpenAI({ apiKey: key, baseURL: base, maxRetries: 0 });
    const anthropic = new Anthropic({ apiKey: key, baseURL: base.replace(/\/v1$/, ''), maxRetries: 0 });
    // The same prompt and cap in each API's form: each costs the same.
    return [
      async () => (await openai.chat.completions.create({ model: MODEL, max_tokens: 8, messages: [{ role: 'user', content: 'one two three' }] })).usage as unknown as { cost: number },
      async () => (await anthropic.messages.create({ model: MODEL, max_tokens: 8, messages: [{ role: 'user', content: 'one two three' }] })).usage as unknown as { cost: number },
      async () => (await openai.responses.create({ model: MODEL, max_output_tokens: 8, input: 'one two three', store: false })).usage as unknown as { cost: number },
    ];
  };

  beforeAll(async () => {
    service = await startTestService();
  });
  afterAll(() => service?.stop());

  it("refuses with a 402 in each API's shape, which each client raises", async () => {
    const [chat, messages, responses] = clients(await newKey(0));
    await expect(chat!()).rejects.toMatchObject({ status: 402 });
    await expect(messages!()).rejects.toMatchObject({ status: 402, error: { type: 'error', error: { type: 'billing_error' } } });
    await expect(responses!()).rejects.toMatchObject({ status: 402, error: { type: 'insufficient_quota' } });
  });

  it('charges the three forms alike to one ledger, and stops them all at the cap', async () => {
    const [chat] = clients(service.runtime.demo.keys.workspace);
    const cost = (await chat!()).cost;
    // A request is let in while what is spent and its most it could cost fit: the cap leaves room for several.
    const refused = await service.call('/chat/completions', { method: 'POST', key: await newKey(0), body: { model: MODEL, max_tokens: 8, messages: [{ role: 'user', content: 'one two three' }] } });
    const estimate = refused.body.error.metadata.request_max_cost_usd as number;
    const limit = Math.ceil((4 * cost + 1.5 * estimate) * 1e6) / 1e6;
    const key = await newKey(limit);
    const forms = clients(key);
    const costs: number[] = [];
    let refusal: unknown;
    for (let i = 0; refusal === undefined && i < 200; i++) {
      await forms[i % 3]!().then((usage) => costs.push(usage.cost), (error: unknown) => (refusal = error));
    }
    expect(refusal).toMatchObject({ status: 402 });
    expect(new Set(costs)).toEqual(new Set([cost]));
    const spent = (await service.call('/key', { key })).body.data.usage as number;
    expect(spent).toBeCloseTo(costs.reduce((sum, each) => sum + each, 0), 12);
    expect(spent).toBeLessThanOrEqual(limit);
    expect(costs.length).toBeGreaterThanOrEqual(4);
  });
});
