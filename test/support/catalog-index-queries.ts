import { DEFAULT_PRIVACY, DEFAULT_PROVIDER_PREFERENCES } from '../../lambdas/accounts/types';
import { buildCallerPolicy, type CallerPolicy } from '../../lambdas/catalog/caller-policy';
import type { CatalogIndex } from '../../lambdas/catalog/catalog-index';
import type { CatalogQuery } from '../../lambdas/catalog/catalog-query';
import type { OutputModality, PublicModel } from '../../lambdas/catalog/types';

/** A catalog query for text models, unsorted and unpaged unless the fields say otherwise. */
export function query(fields: Partial<CatalogQuery> = {}): CatalogQuery {
  return { outputModalities: new Set<OutputModality>(['text']), sort: null, page: null, ...fields };
}

/**
 * The caller policy of an organization with default preferences and privacy, ignoring the
 * providers given, behind one guardrail when `allowedModels` is set, on a regional hostname when
 * `region` is.
 */
export function policy(fields: {
  ignoredProviders?: string[];
  allowedModels?: string[];
  region?: string | null;
}): CallerPolicy {
  return buildCallerPolicy({
    organization: {
      providerPreferences: { ...DEFAULT_PROVIDER_PREFERENCES, ignoredProviders: fields.ignoredProviders ?? [] },
      privacy: DEFAULT_PRIVACY,
    },
    guardrails: fields.allowedModels
      ? [{ allowedModels: fields.allowedModels, ignoredModels: null, allowedProviders: null, ignoredProviders: null, enforceZdr: false }]
      : [],
    region: fields.region ?? null,
  });
}

/** The model views `index.list` answers, parsed. */
export function listModels(index: CatalogIndex, who: CallerPolicy, q: CatalogQuery): PublicModel[] {
  return JSON.parse(index.list(who, q).dataJson) as PublicModel[];
}

/** The ids of the models `index.list` answers, in its order. */
export function listIds(index: CatalogIndex, who: CallerPolicy, q: CatalogQuery): string[] {
  return listModels(index, who, q).map((m) => m.id);
}
