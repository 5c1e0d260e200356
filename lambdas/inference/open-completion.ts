import type { Principal } from '../accounts/types';
import type { ProviderEndpoint, PublicModel } from '../catalog/types';
import { maximumCost, tokenBounds, type BillableRequest } from '../spending/estimate';
import type { OpenCompletion } from '../spending/open-completions';
import { ZERO, compare, minus, smaller } from '../usd';
import { clientText } from '../usage/generations';
import { usageRecord } from '../usage/usage';

/**
 * What a limited completion is recorded as should its function die before it ends (docs/limits.md,
 * "Leaving early and failures"): the estimate its limits keep charged, on the endpoint whose bound
 * the estimate is (the dearest the request could reach), the tokens at their bounds, marked
 * `maximum`; and what its generation keeps of the request.
 */
export function openCompletion(input: {
  principal: Principal;
  candidates: readonly { model: PublicModel; endpoints: readonly ProviderEndpoint[] }[];
  billable: BillableRequest;
  estimate: string;
  at: Date;
  request: { generationId: string; requestId: string; streamed: boolean; headers: { origin?: string; referer?: string; userAgent?: string }; body: Readonly<Record<string, unknown>> };
}): OpenCompletion {
  const { principal, billable, estimate, at, request } = input;
  const { model, endpoint, promptCost } = dearestEndpoint(input.candidates, billable, at);
  const bounds = tokenBounds(billable, endpoint);
  const tokens = (perChoice: number) => Math.min(Number.MAX_SAFE_INTEGER, perChoice * billable.choices);
  const record = usageRecord({ principal, model, endpoint, promptTokens: tokens(bounds.prompt), completionTokens: tokens(bounds.completion), at });
  const prompt = smaller(promptCost, estimate);
  return {
    usage: {
      organizationId: record.organizationId,
      keyHash: record.keyHash,
      workspaceId: record.workspaceId,
      model: { id: model.id, canonical_slug: model.canonical_slug },
      endpoint: { tag: endpoint.tag, provider_name: endpoint.provider_name },
      promptTokens: record.promptTokens,
      completionTokens: record.completionTokens,
      cost: estimate,
      costParts: { prompt, completion: minus(estimate, prompt) },
      date: record.date,
      via: record.via,
      charge: 'maximum',
    },
    request: {
      generationId: request.generationId,
      requestId: request.requestId,
      createdAt: at.toISOString(),
      streamed: request.streamed,
      origin: clientText(request.headers.origin) ?? '',
      httpReferer: clientText(request.headers.referer),
      userAgent: clientText(request.headers.userAgent),
      externalUser: clientText(request.body.user),
    },
  };
}

/** The endpoint whose cost bound is the largest, with its model and what of the bound the prompt is. */
function dearestEndpoint(candidates: readonly { model: PublicModel; endpoints: readonly ProviderEndpoint[] }[], billable: BillableRequest, at: Date) {
  let dearest: { model: PublicModel; endpoint: ProviderEndpoint; cost: string; promptCost: string } | undefined;
  for (const { model, endpoints } of candidates) {
    for (const endpoint of endpoints) {
      const bound = maximumCost(billable, [endpoint], at);
      if (!bound.bounded) continue;
      if (!dearest || compare(bound.cost, dearest.cost) > 0) dearest = { model, endpoint, cost: bound.cost, promptCost: bound.promptCost };
    }
  }
  if (dearest) return dearest;
  // Only a limit's reservation opens a completion, and it reserves a bounded cost: some endpoint is bounded.
  const [first] = candidates;
  return { model: first!.model, endpoint: first!.endpoints[0]!, cost: ZERO, promptCost: ZERO };
}
