import { DEFAULT_PRIVACY, DEFAULT_PROVIDER_PREFERENCES, type Guardrail, type Organization } from '../../../lambdas/accounts/types';
import { buildCallerPolicy, OPEN_POLICY, regionForHost } from '../../../lambdas/catalog/caller-policy';
import type { DataPolicy, ProviderEndpoint, PublicModel } from '../../../lambdas/catalog/types';
import { providerEndpoint, publicModel } from '../../support/catalog-fixtures';

type PolicyInput = Parameters<typeof buildCallerPolicy>[0];
type GuardrailInput = PolicyInput['guardrails'][number];

/** Only the fields the policy reads matter (tag, data policy, regions); the rest are the fixture defaults. */
function endpoint(tag: string, overrides: { dataPolicy?: Partial<DataPolicy>; regions?: string[] } = {}): ProviderEndpoint {
  return providerEndpoint(tag, { regions: ['us', 'eu'], ...overrides });
}

/** Only the id and canonical slug matter to the policy. */
function model(id: string, canonicalSlug: string): PublicModel {
  return publicModel(id, { canonical_slug: canonicalSlug });
}

function guardrail(fields: Partial<GuardrailInput>): GuardrailInput {
  return { allowedModels: null, ignoredModels: null, allowedProviders: null, ignoredProviders: null, enforceZdr: false, ...fields };
}

function policy(input: {
  providerPreferences?: Partial<Organization['providerPreferences']>;
  privacy?: Partial<Organization['privacy']>;
  guardrails?: GuardrailInput[];
  region?: string | null;
}) {
  return buildCallerPolicy({
    organization: {
      providerPreferences: { ...DEFAULT_PROVIDER_PREFERENCES, ...input.providerPreferences },
      privacy: { ...DEFAULT_PRIVACY, ...input.privacy },
    },
    guardrails: input.guardrails ?? [],
    region: input.region ?? null,
  });
}

const sonnet = model('anthropic/claude-sonnet-4.5', 'anthropic/claude-4.5-sonnet-20250929');
const sonnetFree = model('anthropic/claude-sonnet-4.5:free', 'anthropic/claude-4.5-sonnet-20250929');
const llama = model('meta-llama/llama-4', 'meta-llama/llama-4-20250405');

describe('buildCallerPolicy', () => {
  describe('defaults', () => {
    it('allows every model and endpoint with default organization settings and no guardrails', () => {
      const open = policy({});

      expect(open.allowsModel(sonnet)).toBe(true);
      expect(open.allowsEndpoint(endpoint('anthropic', { dataPolicy: { training: true, retainsPrompts: true, zeroDataRetention: false } }))).toBe(true);
    });

    it('OPEN_POLICY allows everything', () => {
      expect(OPEN_POLICY.allowsModel(sonnet)).toBe(true);
      expect(OPEN_POLICY.allowsEndpoint(endpoint('x', { regions: [] }))).toBe(true);
    });
  });

  describe('organization provider preferences', () => {
    it('allows only the allowed providers, comparing case-insensitively', () => {
      const only = policy({ providerPreferences: { allowedProviders: ['Anthropic', 'AMAZON-bedrock'] } });

      expect(only.allowsEndpoint(endpoint('anthropic'))).toBe(true);
      expect(only.allowsEndpoint(endpoint('Amazon-Bedrock'))).toBe(true);
      expect(only.allowsEndpoint(endpoint('azure'))).toBe(false);
    });

    it('allows no provider with an empty allowlist', () => {
      expect(policy({ providerPreferences: { allowedProviders: [] } }).allowsEndpoint(endpoint('anthropic'))).toBe(false);
    });

    it('drops ignored providers, comparing case-insensitively', () => {
      const ignoring = policy({ providerPreferences: { ignoredProviders: ['AZURE'] } });

      expect(ignoring.allowsEndpoint(endpoint('azure'))).toBe(false);
      expect(ignoring.allowsEndpoint(endpoint('Azure'))).toBe(false);
      expect(ignoring.allowsEndpoint(endpoint('google-vertex'))).toBe(true);
    });

    it('lets ignored win over allowed', () => {
      const both = policy({ providerPreferences: { allowedProviders: ['azure'], ignoredProviders: ['azure'] } });

      expect(both.allowsEndpoint(endpoint('azure'))).toBe(false);
    });
  });

  describe('organization privacy settings', () => {
    it('drops providers that train on prompts when training providers are not allowed', () => {
      const noTraining = policy({ privacy: { allowTrainingProviders: false } });

      expect(noTraining.allowsEndpoint(endpoint('a', { dataPolicy: { training: true } }))).toBe(false);
      expect(noTraining.allowsEndpoint(endpoint('b', { dataPolicy: { training: false, retainsPrompts: true, zeroDataRetention: false } }))).toBe(true);
    });

    it('drops providers that retain prompts when retaining providers are not allowed', () => {
      const noRetention = policy({ privacy: { allowRetainingProviders: false } });

      expect(noRetention.allowsEndpoint(endpoint('a', { dataPolicy: { retainsPrompts: true, zeroDataRetention: false } }))).toBe(false);
      expect(noRetention.allowsEndpoint(endpoint('b', { dataPolicy: { training: true, retainsPrompts: false } }))).toBe(true);
    });

    it('keeps only zero-data-retention endpoints when the organization is ZDR-only', () => {
      const zdr = policy({ privacy: { zeroDataRetentionOnly: true } });

      expect(zdr.allowsEndpoint(endpoint('a', { dataPolicy: { zeroDataRetention: false } }))).toBe(false);
      expect(zdr.allowsEndpoint(endpoint('b', { dataPolicy: { zeroDataRetention: true } }))).toBe(true);
    });

    it('does not filter models by privacy (only endpoints)', () => {
      expect(policy({ privacy: { zeroDataRetentionOnly: true, allowTrainingProviders: false } }).allowsModel(sonnet)).toBe(true);
    });
  });

  describe('guardrails', () => {
    it('allowed models match by id', () => {
      const byId = policy({ guardrails: [guardrail({ allowedModels: ['anthropic/claude-sonnet-4.5'] })] });

      expect(byId.allowsModel(sonnet)).toBe(true);
      expect(byId.allowsModel(sonnetFree)).toBe(false);
      expect(byId.allowsModel(llama)).toBe(false);
    });

    it('allowed models match by canonical slug, covering every variant sharing it', () => {
      const bySlug = policy({ guardrails: [guardrail({ allowedModels: ['anthropic/claude-4.5-sonnet-20250929'] })] });

      expect(bySlug.allowsModel(sonnet)).toBe(true);
      expect(bySlug.allowsModel(sonnetFree)).toBe(true);
      expect(bySlug.allowsModel(llama)).toBe(false);
    });

    it('allowed models compare exactly (model ids are case-sensitive)', () => {
      expect(policy({ guardrails: [guardrail({ allowedModels: ['Anthropic/Claude-Sonnet-4.5'] })] }).allowsModel(sonnet)).toBe(false);
    });

    it('ignored models match by id', () => {
      const byId = policy({ guardrails: [guardrail({ ignoredModels: ['anthropic/claude-sonnet-4.5:free'] })] });

      expect(byId.allowsModel(sonnetFree)).toBe(false);
      expect(byId.allowsModel(sonnet)).toBe(true);
    });

    it('ignored models match by canonical slug, covering every variant sharing it', () => {
      const bySlug = policy({ guardrails: [guardrail({ ignoredModels: ['anthropic/claude-4.5-sonnet-20250929'] })] });

      expect(bySlug.allowsModel(sonnet)).toBe(false);
      expect(bySlug.allowsModel(sonnetFree)).toBe(false);
      expect(bySlug.allowsModel(llama)).toBe(true);
    });

    it('allowed providers restrict endpoints, case-insensitively', () => {
      const only = policy({ guardrails: [guardrail({ allowedProviders: ['Google-Vertex'] })] });

      expect(only.allowsEndpoint(endpoint('google-vertex'))).toBe(true);
      expect(only.allowsEndpoint(endpoint('azure'))).toBe(false);
    });

    it('ignored providers drop endpoints, case-insensitively', () => {
      const ignoring = policy({ guardrails: [guardrail({ ignoredProviders: ['AZURE'] })] });

      expect(ignoring.allowsEndpoint(endpoint('azure'))).toBe(false);
      expect(ignoring.allowsEndpoint(endpoint('google-vertex'))).toBe(true);
    });

    it('enforce_zdr keeps only zero-data-retention endpoints even when the organization allows all', () => {
      const zdr = policy({ guardrails: [guardrail({ enforceZdr: true })] });

      expect(zdr.allowsEndpoint(endpoint('a', { dataPolicy: { zeroDataRetention: false } }))).toBe(false);
      expect(zdr.allowsEndpoint(endpoint('b', { dataPolicy: { zeroDataRetention: true } }))).toBe(true);
    });

    it('applies every guardrail: a model or endpoint must pass all of them', () => {
      const stacked = policy({
        guardrails: [
          guardrail({ allowedModels: ['anthropic/claude-4.5-sonnet-20250929', 'meta-llama/llama-4'] }),
          guardrail({ ignoredModels: ['anthropic/claude-sonnet-4.5:free'], allowedProviders: ['anthropic', 'azure'] }),
          guardrail({ ignoredProviders: ['azure'] }),
          guardrail({ enforceZdr: true }),
        ],
      });

      expect(stacked.allowsModel(sonnet)).toBe(true);
      expect(stacked.allowsModel(sonnetFree)).toBe(false);
      expect(stacked.allowsModel(llama)).toBe(true);
      expect(stacked.allowsModel(model('openai/gpt-5', 'openai/gpt-5'))).toBe(false);
      expect(stacked.allowsEndpoint(endpoint('anthropic'))).toBe(true);
      expect(stacked.allowsEndpoint(endpoint('anthropic', { dataPolicy: { zeroDataRetention: false } }))).toBe(false);
      expect(stacked.allowsEndpoint(endpoint('azure'))).toBe(false);
      expect(stacked.allowsEndpoint(endpoint('google-vertex'))).toBe(false);
    });

    it('two allowlists intersect', () => {
      const intersecting = policy({
        guardrails: [
          guardrail({ allowedProviders: ['anthropic', 'azure'] }),
          guardrail({ allowedProviders: ['azure', 'google-vertex'] }),
        ],
      });

      expect(intersecting.allowsEndpoint(endpoint('azure'))).toBe(true);
      expect(intersecting.allowsEndpoint(endpoint('anthropic'))).toBe(false);
      expect(intersecting.allowsEndpoint(endpoint('google-vertex'))).toBe(false);
    });

    it('accepts full Guardrail records', () => {
      const record: Guardrail = {
        id: 'gr_1',
        organizationId: 'org_1',
        workspaceId: null,
        name: 'No Azure',
        description: null,
        allowedModels: null,
        ignoredModels: null,
        allowedProviders: null,
        ignoredProviders: ['azure'],
        enforceZdr: false,
        createdAt: '2026-01-01T00:00:00Z',
        updatedAt: null,
      };

      expect(policy({ guardrails: [record] }).allowsEndpoint(endpoint('azure'))).toBe(false);
    });
  });

  describe('region (docs/reference.md#listing-rules rule 4)', () => {
    it('keeps only endpoints that serve in the caller region', () => {
      const eu = policy({ region: 'eu' });

      expect(eu.allowsEndpoint(endpoint('mistral', { regions: ['eu'] }))).toBe(true);
      expect(eu.allowsEndpoint(endpoint('azure', { regions: ['us', 'eu'] }))).toBe(true);
      expect(eu.allowsEndpoint(endpoint('groq', { regions: ['us'] }))).toBe(false);
      expect(eu.allowsEndpoint(endpoint('nowhere', { regions: [] }))).toBe(false);
    });

    it('does not filter by region outside a regional hostname', () => {
      expect(policy({ region: null }).allowsEndpoint(endpoint('nowhere', { regions: [] }))).toBe(true);
    });
  });
});

describe('regionForHost', () => {
  const hostnames = { eu: 'eu.modelgate.example', us: 'us.modelgate.example' };

  it('returns the region of a configured hostname', () => {
    expect(regionForHost('eu.modelgate.example', hostnames)).toBe('eu');
    expect(regionForHost('us.modelgate.example', hostnames)).toBe('us');
  });

  it('compares normalised hostnames only: normalising is the request parser\'s job, done once', () => {
    expect(regionForHost('eu.modelgate.example.', hostnames)).toBeNull();
  });

  it('returns null for a hostname that is not configured', () => {
    expect(regionForHost('api.modelgate.example', hostnames)).toBeNull();
    expect(regionForHost('eu.modelgate.example.evil.test', hostnames)).toBeNull();
  });

  it('returns null without a Host header', () => {
    expect(regionForHost(undefined, hostnames)).toBeNull();
    expect(regionForHost('', hostnames)).toBeNull();
  });

  it('returns null when no regional hostnames are configured', () => {
    expect(regionForHost('eu.modelgate.example', {})).toBeNull();
  });
});

describe('provider names with offerings', () => {
  const base = { providerPreferences: { allowedProviders: null, ignoredProviders: [] }, privacy: { allowTrainingProviders: true, allowRetainingProviders: true, zeroDataRetentionOnly: false } };
  const endpoint = (tag: string) => providerEndpoint(tag, { regions: ['us'] });

  it('lets a provider name cover its offerings, and a full tag only that offering', () => {
    const byProvider = buildCallerPolicy({ organization: { ...base, providerPreferences: { allowedProviders: ['Novita'], ignoredProviders: [] } }, guardrails: [], region: null });
    expect(byProvider.allowsEndpoint(endpoint('novita/fp8'))).toBe(true);
    expect(byProvider.allowsEndpoint(endpoint('novita'))).toBe(true);
    expect(byProvider.allowsEndpoint(endpoint('novitax'))).toBe(false);
    const byOffering = buildCallerPolicy({ organization: { ...base, providerPreferences: { allowedProviders: ['novita/fp8'], ignoredProviders: [] } }, guardrails: [], region: null });
    expect(byOffering.allowsEndpoint(endpoint('novita/fp8'))).toBe(true);
    expect(byOffering.allowsEndpoint(endpoint('novita/bf16'))).toBe(false);
    const ignoring = buildCallerPolicy({ organization: { ...base, providerPreferences: { allowedProviders: null, ignoredProviders: ['novita'] } }, guardrails: [], region: null });
    expect(ignoring.allowsEndpoint(endpoint('novita/fp8'))).toBe(false);
    expect(ignoring.allowsEndpoint(endpoint('together'))).toBe(true);
  });

  it('gives equal keys to equal policies and different keys to different ones', () => {
    const a = buildCallerPolicy({ organization: { ...base, providerPreferences: { allowedProviders: ['b', 'a'], ignoredProviders: [] } }, guardrails: [], region: null });
    const b = buildCallerPolicy({ organization: { ...base, providerPreferences: { allowedProviders: ['A', 'b'], ignoredProviders: [] } }, guardrails: [], region: null });
    const c = buildCallerPolicy({ organization: { ...base, providerPreferences: { allowedProviders: ['a'], ignoredProviders: [] } }, guardrails: [], region: null });
    const d = buildCallerPolicy({ organization: { ...base, providerPreferences: { allowedProviders: ['a', 'b'], ignoredProviders: [] } }, guardrails: [], region: 'eu' });
    expect(a.key).toBe(b.key);
    expect(new Set([a.key, c.key, d.key]).size).toBe(3);
  });
});
