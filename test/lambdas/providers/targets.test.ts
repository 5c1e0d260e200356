import { bedrockResources } from '../../../lib/constructs/bedrock-access';
import { checkUpstreams } from '../../../lambdas/inference/upstream-check';
import { NO_CREDENTIALS } from '../../../lambdas/inference/upstream';
import { providerModelId, readApiTarget, targetBaseUrl } from '../../../lambdas/providers/targets';
import { catalogEntry, providerEndpoint } from '../../support/catalog-fixtures';

describe('provider API targets', () => {
  it("gives OpenAI and Anthropic the catalog id after its author, Bedrock only what `models` says", () => {
    const openai = readApiTarget({ api: 'openai' });
    expect(providerModelId(openai, 'openai/gpt-4o-mini')).toBe('gpt-4o-mini');
    expect(providerModelId(openai, 'openai/gpt-4o-mini:free')).toBe('gpt-4o-mini');
    expect(providerModelId(readApiTarget({ api: 'anthropic', models: { 'anthropic/claude-sonnet-4': 'claude-sonnet-4-20250514' } }), 'anthropic/claude-sonnet-4')).toBe('claude-sonnet-4-20250514');
    const bedrock = readApiTarget({ api: 'bedrock', models: { 'anthropic/claude-sonnet-4': 'us.anthropic.claude-sonnet-4-20250514-v1:0' } });
    expect(providerModelId(bedrock, 'anthropic/claude-sonnet-4')).toBe('us.anthropic.claude-sonnet-4-20250514-v1:0');
    expect(providerModelId(bedrock, 'anthropic/claude-opus-4')).toBeUndefined();
    // A catalog id named like an inherited member finds nothing.
    expect(providerModelId(bedrock, 'constructor')).toBeUndefined();
  });

  it('addresses each API at its own base URL unless one is given', () => {
    expect(targetBaseUrl(readApiTarget({ api: 'openai' }), 'us-east-1')).toBe('https://api.openai.com/v1');
    expect(targetBaseUrl(readApiTarget({ api: 'anthropic' }), 'us-east-1')).toBe('https://api.anthropic.com/v1');
    expect(targetBaseUrl(readApiTarget({ api: 'bedrock' }), 'eu-west-1')).toBe('https://bedrock-runtime.eu-west-1.amazonaws.com');
    expect(targetBaseUrl(readApiTarget({ api: 'bedrock', region: 'us-west-2' }), 'eu-west-1')).toBe('https://bedrock-runtime.us-west-2.amazonaws.com');
  });

  it('grants Bedrock a foundation model in its region, a profile with its model in every region, an ARN as given', () => {
    expect(bedrockResources('amazon.nova-pro-v1:0', 'us-east-1', '123456789012', 'aws')).toEqual(['arn:aws:bedrock:us-east-1::foundation-model/amazon.nova-pro-v1:0']);
    expect(bedrockResources('eu.anthropic.claude-sonnet-4-v1:0', 'eu-west-1', '123456789012', 'aws')).toEqual([
      'arn:aws:bedrock:eu-west-1:123456789012:inference-profile/eu.anthropic.claude-sonnet-4-v1:0',
      'arn:aws:bedrock:*::foundation-model/anthropic.claude-sonnet-4-v1:0',
    ]);
    const application = 'arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc123';
    expect(bedrockResources(application, 'us-east-1', '123456789012', 'aws')).toEqual([application]);
  });

  it('tells the operator which endpoints cannot be served, and why', async () => {
    const entries = [catalogEntry('openai/gpt-4o', { endpoints: [providerEndpoint('openai'), providerEndpoint('azure'), providerEndpoint('amazon-bedrock')] })];
    const upstreams = { openai: readApiTarget({ api: 'openai' }), 'amazon-bedrock': readApiTarget({ api: 'bedrock' }) };
    const rows = await checkUpstreams(entries, upstreams, NO_CREDENTIALS, 'development-echo');
    expect(rows.map((row) => [row.tag, row.problem])).toEqual([['openai', 'no key'], ['azure', 'no upstream'], ['amazon-bedrock', 'no model id']]);
    const keyed = await checkUpstreams(entries, upstreams, { forProvider: async (tag) => (tag === 'openai' ? 'sk-1' : undefined) }, 'development-echo');
    expect(keyed[0]).toMatchObject({ entry: 'openai', api: 'openai', modelId: 'gpt-4o', problem: null });
  });
});
