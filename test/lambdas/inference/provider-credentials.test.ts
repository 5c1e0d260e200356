import { CachedProviderCredentials } from '../../../lambdas/inference/provider-credentials';
import { lookupByProvider } from '../../../lambdas/inference/upstream';
import { FixedClock } from '../../support/fixed-clock';

describe('provider credentials', () => {
  it('picks the exact tag, then the provider, then *', () => {
    const map = { 'novita/fp8': 'exact', novita: 'provider', '*': 'any' };
    expect(lookupByProvider(map, 'novita/fp8')).toBe('exact');
    expect(lookupByProvider(map, 'novita/bf16')).toBe('provider');
    expect(lookupByProvider(map, 'alibaba')).toBe('any');
    expect(lookupByProvider({ novita: 'x' }, 'constructor')).toBeUndefined();
  });

  it('loads the document once per max age and retries a failed load on the next request', async () => {
    const clock = new FixedClock();
    const documents = [Promise.reject(new Error('throttled')), Promise.resolve('{"*":"k1"}'), Promise.resolve('{"*":"k2"}')];
    let loads = 0;
    const credentials = new CachedProviderCredentials(() => documents[loads++]!, clock, 300);
    await expect(credentials.forProvider('openai')).rejects.toThrow('throttled');
    expect(await credentials.forProvider('openai')).toBe('k1');
    clock.advance(299_000);
    expect(await credentials.forProvider('openai')).toBe('k1');
    clock.advance(1_000);
    expect(await credentials.forProvider('openai')).toBe('k2');
    expect(loads).toBe(3);
  });

  it.each([
    ['not JSON', 'sk-raw-value', 'provider credentials are not a JSON object'],
    ['a list', '["sk"]', 'provider credentials are not a JSON object'],
    ['a number value', '{"openai": 5}', 'provider credential for "openai" is not a string'],
  ])('fails on %s without echoing the document', async (_name, text, message) => {
    const credentials = new CachedProviderCredentials(async () => text, new FixedClock(), 300);
    await expect(credentials.forProvider('openai')).rejects.toThrow(new Error(message));
  });
});
