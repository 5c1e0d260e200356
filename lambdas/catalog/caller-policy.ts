import type { AccountStore } from '../accounts/account-store';
import type { Guardrail, Organization, Principal } from '../accounts/types';
import type { ProviderEndpoint, PublicModel } from './types';

/**
 * What one caller may reach: the organization's provider preferences and privacy
 * settings, every guardrail on its key and workspace, and the region of the hostname it
 * called. Built once per request; the checks are plain set lookups.
 */
export interface CallerPolicy {
  /** Equal for two policies exactly when they allow the same models and endpoints. */
  readonly key: string;
  allowsModel(model: PublicModel): boolean;
  allowsEndpoint(endpoint: ProviderEndpoint): boolean;
  /** Set when `allowsModel` is true of every model: a listing then asks nothing per model. */
  readonly allowsEveryModel?: boolean;
  /**
   * Set when `allowsEndpoint` reads nothing of an endpoint but its {@link endpointTraits}:
   * endpoints with equal traits get one answer, so a listing asks once per distinct traits.
   */
  readonly decidesByTraits?: boolean;
}

/**
 * What of an endpoint the policies built here read: its provider tag, its data policy and
 * its regions. Equal strings, equal answers.
 */
export function endpointTraits(endpoint: ProviderEndpoint): string {
  const { training, retainsPrompts, zeroDataRetention } = endpoint.dataPolicy;
  return JSON.stringify([endpoint.tag, training, retainsPrompts, zeroDataRetention, endpoint.regions]);
}

interface GuardrailSets {
  allowedModels: Set<string> | null;
  ignoredModels: Set<string>;
  allowedProviders: Set<string> | null;
  ignoredProviders: Set<string>;
  enforceZdr: boolean;
}

const lower = (values: readonly string[]) => new Set(values.map((v) => v.toLowerCase()));

/** The caller's policy from its organization's settings, its guardrails and the region it called. */
export function buildCallerPolicy(input: {
  organization: Pick<Organization, 'providerPreferences' | 'privacy'>;
  guardrails: readonly Pick<Guardrail, 'allowedModels' | 'ignoredModels' | 'allowedProviders' | 'ignoredProviders' | 'enforceZdr'>[];
  /** In-region routing (docs/reference.md#listing-rules rule 4); null outside a regional hostname. */
  region: string | null;
}): CallerPolicy {
  const { providerPreferences, privacy } = input.organization;
  const allowedProviders = providerPreferences.allowedProviders ? lower(providerPreferences.allowedProviders) : null;
  const ignoredProviders = lower(providerPreferences.ignoredProviders);
  const guardrails: GuardrailSets[] = input.guardrails.map((g) => ({
    allowedModels: g.allowedModels ? new Set(g.allowedModels) : null,
    ignoredModels: new Set(g.ignoredModels ?? []),
    allowedProviders: g.allowedProviders ? lower(g.allowedProviders) : null,
    ignoredProviders: lower(g.ignoredProviders ?? []),
    enforceZdr: g.enforceZdr,
  }));
  const zdrOnly = privacy.zeroDataRetentionOnly || guardrails.some((g) => g.enforceZdr);
  // Most callers name no provider at all: skip the per-endpoint provider work for them.
  const checksProviders =
    allowedProviders !== null ||
    ignoredProviders.size > 0 ||
    guardrails.some((g) => g.allowedProviders !== null || g.ignoredProviders.size > 0);
  /**
   * A tag names a provider, optionally with its offering (`novita/fp8`): naming the
   * provider (`novita`) covers all its offerings, naming the full tag only that one.
   */
  const providerAllowed = (tag: string): boolean => {
    const full = tag.toLowerCase();
    const slash = full.indexOf('/');
    const base = slash < 0 ? full : full.slice(0, slash);
    const named = (set: ReadonlySet<string>) => set.has(full) || set.has(base);
    if (allowedProviders && !named(allowedProviders)) return false;
    if (named(ignoredProviders)) return false;
    for (const g of guardrails) {
      if (g.allowedProviders && !named(g.allowedProviders)) return false;
      if (named(g.ignoredProviders)) return false;
    }
    return true;
  };
  const region = input.region;
  const sorted = (set: ReadonlySet<string> | null) => (set ? [...set].sort() : null);
  const key = JSON.stringify([
    sorted(allowedProviders),
    sorted(ignoredProviders),
    privacy.allowTrainingProviders,
    privacy.allowRetainingProviders,
    zdrOnly,
    region,
    guardrails
      .map((g) => JSON.stringify([sorted(g.allowedModels), sorted(g.ignoredModels), sorted(g.allowedProviders), sorted(g.ignoredProviders)]))
      .sort(),
  ]);

  return {
    key,
    allowsEveryModel: guardrails.every((g) => g.allowedModels === null && g.ignoredModels.size === 0),
    decidesByTraits: true,
    // Guardrails name models by canonical slug or by id; either form matches.
    allowsModel(model) {
      for (const g of guardrails) {
        if (g.allowedModels && !g.allowedModels.has(model.canonical_slug) && !g.allowedModels.has(model.id)) return false;
        if (g.ignoredModels.has(model.canonical_slug) || g.ignoredModels.has(model.id)) return false;
      }
      return true;
    },
    allowsEndpoint(endpoint) {
      if (checksProviders && !providerAllowed(endpoint.tag)) return false;
      const policy = endpoint.dataPolicy;
      if (!privacy.allowTrainingProviders && policy.training) return false;
      if (!privacy.allowRetainingProviders && policy.retainsPrompts) return false;
      if (zdrOnly && !policy.zeroDataRetention) return false;
      if (region !== null && !endpoint.regions.includes(region)) return false;
      return true;
    },
  };
}

/** Guardrails on the key and on its workspace all apply (docs/reference.md#organizations-workspaces-and-guardrails). */
export async function loadCallerPolicy(principal: Principal, accounts: AccountStore, region: string | null): Promise<CallerPolicy> {
  return buildCallerPolicy({ organization: principal.organization, guardrails: await loadCallerGuardrails(principal, accounts), region });
}

/** Every guardrail on the caller's key and workspace, from their copies; none read when there are none. */
export async function loadCallerGuardrails(principal: Principal, accounts: Pick<AccountStore, 'getGuardrails'>): Promise<Guardrail[]> {
  const { organization, key, workspace } = principal;
  const ids = [...key.guardrailIds, ...(workspace?.guardrailIds ?? [])];
  return ids.length > 0 ? accounts.getGuardrails(organization.id, ids) : [];
}

/** An open policy: every model and endpoint (operators and benchmarks). */
export const OPEN_POLICY: CallerPolicy = {
  key: 'open',
  allowsModel: () => true,
  allowsEndpoint: () => true,
  allowsEveryModel: true,
  decidesByTraits: true,
};

/**
 * The region whose configured hostname the request came in on, or null. Both sides are
 * normalised hostnames (`requestHost`, `loadConfig`), so this is a plain comparison.
 */
export function regionForHost(hostname: string | undefined, regionalHostnames: Readonly<Record<string, string>>): string | null {
  if (!hostname) return null;
  for (const [region, regional] of Object.entries(regionalHostnames)) {
    if (hostname === regional) return region;
  }
  return null;
}
