import type { CatalogEntry, ProviderEndpoint } from '../catalog/types';
import { DomainError } from '../errors';
import type { UpstreamTarget } from '../providers/targets';
import { routeOf, openUpstream, upstreamEntryOf, type ProviderCredentials, type UpstreamOptions } from './upstream';

/** Whether one catalog endpoint can be served, and through what (docs/providers.md, "Checking what is routable"). */
export interface EndpointRoutability {
  model: string;
  tag: string;
  provider: string;
  /** The `inferenceUpstreams` entry that serves the tag (`*` included), or null. */
  entry: string | null;
  /** What the entry is: `openai`, `anthropic`, `bedrock`, `public API`, `development`. */
  api: string | null;
  /** The model id the upstream is sent. */
  modelId: string | null;
  /** Null when routable. */
  problem: 'no upstream' | 'no model id' | 'no key' | null;
}

/** What a target is, in a word. */
function apiOf(target: UpstreamTarget, developmentName: string): string {
  if (typeof target === 'object') return target.api;
  return target === developmentName ? 'development' : 'public API';
}

/**
 * Every endpoint of the catalog with its route: the entry that serves it, the model id it is
 * sent, or why it cannot be served. OpenAI and Anthropic need a key in the provider
 * credentials; Bedrock signs with the function's role, and an upstream of the public API may
 * take none.
 */
export async function checkUpstreams(
  entries: readonly CatalogEntry[],
  upstreams: Readonly<Record<string, UpstreamTarget>>,
  credentials: ProviderCredentials,
  developmentName: string,
): Promise<EndpointRoutability[]> {
  const keyed = new Map<string, boolean>();
  const hasKey = async (tag: string) => {
    if (!keyed.has(tag)) keyed.set(tag, (await credentials.forProvider(tag)) !== undefined);
    return keyed.get(tag)!;
  };
  const rows: EndpointRoutability[] = [];
  for (const { model, endpoints } of entries) {
    for (const endpoint of endpoints) {
      const route = routeOf(endpoint, model.id, upstreams);
      const entry = upstreamEntryOf(upstreams, endpoint.tag) ?? null;
      const base = { model: model.id, tag: endpoint.tag, provider: endpoint.provider_name, entry, api: entry === null ? null : apiOf(upstreams[entry]!, developmentName) };
      if ('unroutable' in route) {
        rows.push({ ...base, modelId: null, problem: route.unroutable });
        continue;
      }
      const needsKey = typeof route.target === 'object' && route.target.api !== 'bedrock';
      rows.push({ ...base, modelId: route.modelId, problem: needsKey && !(await hasKey(endpoint.tag)) ? 'no key' : null });
    }
  }
  return rows;
}

/** What a one-token request to an upstream entry answered, and how long it took. */
export interface ProbeResult {
  entry: string;
  model: string;
  tag: string;
  latencyMs: number;
  /** Null when the upstream answered; else the failure as a completion would meet it. */
  error: Error | null;
}

/**
 * Sends one request of one token to each configured entry, through the first routable endpoint
 * it serves, the way a completion goes (lambdas/inference/upstream.ts), and reads its answer.
 */
export async function probeUpstreams(rows: readonly EndpointRoutability[], entries: readonly CatalogEntry[], options: UpstreamOptions, now: () => number): Promise<ProbeResult[]> {
  const results: ProbeResult[] = [];
  const probed = new Set<string>();
  for (const row of rows) {
    if (row.problem !== null || row.entry === null || probed.has(row.entry)) continue;
    probed.add(row.entry);
    const endpoint = entries.find((entry) => entry.model.id === row.model)!.endpoints.find((candidate) => candidate.tag === row.tag) as ProviderEndpoint;
    const body = JSON.stringify({ model: row.model, messages: [{ role: 'user', content: 'Say OK.' }], max_tokens: 1 });
    const started = now();
    try {
      const upstream = await openUpstream({ modelId: row.model, endpoints: [endpoint], bodyFor: () => body }, new AbortController().signal, options);
      await upstream.reader.text(1024 * 1024);
      results.push({ entry: row.entry, model: row.model, tag: row.tag, latencyMs: Math.round(now() - started), error: null });
    } catch (error) {
      const failure = error instanceof Error ? error : new DomainError('upstream_failed', String(error));
      results.push({ entry: row.entry, model: row.model, tag: row.tag, latencyMs: Math.round(now() - started), error: failure });
    }
  }
  return results;
}
