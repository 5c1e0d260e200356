import { UpstreamError } from '../../../lambdas/errors';
import { toErrorBody } from '../../../lambdas/http/api-errors';
import { openUpstream, type UpstreamOptions } from '../../../lambdas/inference/upstream';
import { providerEndpoint } from '../../support/catalog-fixtures';

describe('openUpstream', () => {
  const options = (overrides: Partial<UpstreamOptions> = {}): UpstreamOptions => ({
    upstreams: { '*': 'https://llm.example.com/v1' },
    transport: async () => Response.json({ choices: [] }),
    development: async () => Response.json({ choices: [] }),
    developmentName: 'development-echo',
    clientFor: () => async () => Response.json({ choices: [] }),
    credentials: { forProvider: async () => 'sk-provider' },
    timeoutMs: 1000,
    ...overrides,
  });

  it('answers 503, never a bare 500, when the provider credentials cannot be read, and sends nothing upstream', async () => {
    let sent = 0;
    const failing = options({
      credentials: { forProvider: async () => Promise.reject(new Error('AccessDeniedException: secret sk-provider-leak')) },
      transport: async () => (sent++, Response.json({ choices: [] })),
    });
    const error = await openUpstream({ modelId: 'acme/model', endpoints: [providerEndpoint('acme')], bodyFor: () => '{}' }, new AbortController().signal, failing).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(toErrorBody(error)).toEqual({ status: 503, body: { error: { code: 503, message: 'Provider credentials are unavailable; retry shortly' } } });
    expect(sent).toBe(0);
  });

  it('answers 503 when no configured upstream serves any of the model\'s providers', async () => {
    const error = await openUpstream({ modelId: 'acme/model', endpoints: [providerEndpoint('acme')], bodyFor: () => '{}' }, new AbortController().signal, options({ upstreams: { other: 'https://x.example.com/v1' } })).catch((e: unknown) => e);
    expect(toErrorBody(error)).toEqual({ status: 503, body: { error: { code: 503, message: 'No provider upstream is configured for this model' } } });
  });
});
