import type { Principal } from '../accounts/types';
import type { ProviderEndpoint, PublicModel } from '../catalog/types';
import { tokenBounds, type BillableRequest } from '../spending/estimate';
import type { OpenCompletion } from '../spending/open-completions';
import { minus } from '../usd';
import { clientText } from '../usage/generations';
import { usageRecord } from '../usage/usage';

/**
 * What a completion is recorded as should its function die before it ends (docs/limits.md,
 * "Leaving early and failures"): its estimate, the most it could cost (under a limit, what its
 * limits keep charged), on the endpoint whose bound the estimate is (the dearest the request could
 * reach, as `maximumCost` found it), the tokens at their bounds, marked `maximum`; and what its
 * generation keeps of the request.
 */
export function openCompletion(input: {
  principal: Principal;
  candidates: readonly { model: PublicModel; endpoints: readonly ProviderEndpoint[] }[];
  billable: BillableRequest;
  /** The estimate reserved, its prompt part, and the endpoint whose bound it is (one of the candidates'). */
  estimate: { cost: string; promptCost: string; endpoint: ProviderEndpoint };
  at: Date;
  request: { generationId: string; requestId: string; streamed: boolean; headers: { origin?: string; referer?: string; userAgent?: string }; body: Readonly<Record<string, unknown>> };
}): OpenCompletion {
  const { principal, billable, at, request } = input;
  const { cost, promptCost, endpoint } = input.estimate;
  const model = input.candidates.find(({ endpoints }) => endpoints.includes(endpoint))!.model;
  const bounds = tokenBounds(billable, endpoint);
  const tokens = (perChoice: number) => Math.min(Number.MAX_SAFE_INTEGER, perChoice * billable.choices);
  const record = usageRecord({ principal, model, endpoint, promptTokens: tokens(bounds.prompt), completionTokens: tokens(bounds.completion), at });
  return {
    usage: {
      organizationId: record.organizationId,
      keyHash: record.keyHash,
      workspaceId: record.workspaceId,
      model: { id: model.id, canonical_slug: model.canonical_slug },
      endpoint: { tag: endpoint.tag, provider_name: endpoint.provider_name },
      promptTokens: record.promptTokens,
      completionTokens: record.completionTokens,
      cost,
      costParts: { prompt: promptCost, completion: minus(cost, promptCost) },
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
