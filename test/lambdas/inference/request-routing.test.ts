import { routedEndpoints, routingAsk } from '../../../lambdas/inference/request-routing';
import type { ProviderEndpoint } from '../../../lambdas/catalog/types';
import { providerEndpoint } from '../../support/catalog-fixtures';

const at = new Date('2026-11-29T12:00:00Z');
const stats = (p50: number) => ({ p50, p75: null, p90: null, p99: null });
/** Three endpoints in the catalog's order: cheap, slow and retaining; dear and fast; a training one in fp8. */
const endpoints: ProviderEndpoint[] = [
  providerEndpoint('cheap', { provider_name: 'Cheap Co', dataPolicy: { zeroDataRetention: false }, pricing: { prompt: '0.000001', completion: '0.000002' }, latency_last_30m: stats(900), throughput_last_30m: stats(20) }),
  providerEndpoint('dear', { provider_name: 'Dear Inc', pricing: { prompt: '0.00001', completion: '0.00002' }, latency_last_30m: stats(200), throughput_last_30m: stats(90), supported_parameters: ['max_tokens', 'seed'] }),
  providerEndpoint('novita/fp8', { provider_name: 'Novita', quantization: 'fp8', pricing: { prompt: '0.000003', completion: '0.000004' }, dataPolicy: { training: true } }),
];
const tags = (provider: Record<string, unknown>, body: Record<string, unknown> = {}, carries = () => true) =>
  routedEndpoints(endpoints, routingAsk({ ...body, provider }), carries, at).map((endpoint) => endpoint.tag);

describe('a request\'s routing preferences (`provider`)', () => {
  it('keeps the catalog order without preferences, and puts `order` first by slug or name', () => {
    expect(tags({})).toEqual(['cheap', 'dear', 'novita/fp8']);
    expect(tags({ order: ['Novita', 'dear'] })).toEqual(['novita/fp8', 'dear', 'cheap']);
    expect(tags({ order: ['novita', 'dear'], allow_fallbacks: false })).toEqual(['novita/fp8', 'dear']);
    expect(tags({ allow_fallbacks: false })).toEqual(['cheap']);
  });

  it('narrows by only, ignore, quantizations, data_collection and zdr', () => {
    expect(tags({ only: ['Dear Inc', 'cheap'] })).toEqual(['cheap', 'dear']);
    expect(tags({ ignore: ['cheap'] })).toEqual(['dear', 'novita/fp8']);
    expect(tags({ quantizations: ['fp8'] })).toEqual(['novita/fp8']);
    expect(tags({ data_collection: 'deny' })).toEqual(['cheap', 'dear']);
    expect(tags({ zdr: true })).toEqual(['dear', 'novita/fp8']);
  });

  it('sorts by price, throughput or latency, the unmeasured last', () => {
    expect(tags({ sort: 'price' })).toEqual(['cheap', 'novita/fp8', 'dear']);
    expect(tags({ sort: { by: 'throughput' } })).toEqual(['dear', 'cheap', 'novita/fp8']);
    expect(tags({ sort: 'latency' })).toEqual(['dear', 'cheap', 'novita/fp8']);
  });

  it('leaves out endpoints above max_price (USD per million tokens) and those of a variable price', () => {
    expect(tags({ max_price: { prompt: 3, completion: '4' } })).toEqual(['cheap', 'novita/fp8']);
    expect(tags({ max_price: { prompt: 0.5 } })).toEqual([]);
    const router = providerEndpoint('router', { pricing: { prompt: '-1', completion: '-1' } });
    expect(routedEndpoints([router], routingAsk({ provider: { max_price: { prompt: 100 } } }), () => true, at)).toEqual([]);
  });

  it('under require_parameters keeps endpoints that support every parameter sent and whose API carries it', () => {
    expect(tags({ require_parameters: true }, { seed: 7, max_tokens: 5 })).toEqual(['dear']);
    expect(tags({ require_parameters: true }, { seed: 7 }, () => false)).toEqual([]);
    expect(tags({}, { seed: 7 })).toEqual(['cheap', 'dear', 'novita/fp8']);
  });
});
