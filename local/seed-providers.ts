/**
 * Who serves a model in the seeded catalog, and on what terms: the provider tags and their
 * display names, the extra hosts of a model, and each endpoint's data policy and regions.
 */
import type { DataPolicy, PublicModel } from '../lambdas/catalog/types';
import { hash } from './seed-figures';

/** The provider tag of a router model's single endpoint. */
export const ROUTER_TAG = 'router';

/**
 * Hosts for open-weight models. Extra endpoints of a model are drawn from here (or from
 * {@link CLOUD_HOSTS} for closed models), never repeating the model's own author.
 */
const OPEN_WEIGHT_HOSTS = [
  'together',
  'fireworks',
  'deepinfra',
  'novita',
  'groq',
  'nebius',
  'parasail',
  'baseten',
  'siliconflow',
  'friendli',
  'atlas-cloud',
  'mistral',
] as const;

/** Hyperscalers that resell closed models. */
const CLOUD_HOSTS = ['google-vertex', 'amazon-bedrock', 'azure'] as const;

/** Authors whose models are only served by themselves and the hyperscalers. */
const CLOSED_MODEL_AUTHORS = new Set(['anthropic', 'openai', 'google', 'x-ai', 'cohere', 'amazon', 'perplexity']);

/** Hosts headquartered in the EU: their endpoints lean to EU regions. */
const EU_HOSTS = new Set(['mistral', 'mistralai', 'nebius']);

const DISPLAY_NAMES: Record<string, string> = {
  'amazon-bedrock': 'Amazon Bedrock',
  'atlas-cloud': 'AtlasCloud',
  azure: 'Azure',
  deepinfra: 'DeepInfra',
  deepseek: 'DeepSeek',
  'google-vertex': 'Google Vertex',
  mistralai: 'Mistral',
  minimax: 'MiniMax',
  moonshotai: 'Moonshot AI',
  openai: 'OpenAI',
  openrouter: 'OpenRouter',
  router: 'OpenRouter',
  siliconflow: 'SiliconFlow',
  'x-ai': 'xAI',
  'z-ai': 'Z.ai',
};

/** Router models pick another model per request; they have no provider of their own. */
export function isRouterModel(model: PublicModel): boolean {
  return model.id.startsWith('openrouter/') || model.pricing.prompt === '-1';
}

/** Author part of a model id, without the `~` that marks an alias (`~google/…` → `google`). */
export function authorTag(modelId: string): string {
  return modelId.split('/')[0].replace(/^~/, '');
}

/** Display form of a provider tag: `amazon-bedrock` → `Amazon Bedrock`. */
export function providerDisplayName(tag: string): string {
  return (
    DISPLAY_NAMES[tag] ??
    tag
      .split('-')
      .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
      .join(' ')
  );
}

/** Whether a host is one of the hyperscalers that resell closed models. */
export function isCloudHost(host: string): boolean {
  return CLOUD_HOSTS.includes(host as (typeof CLOUD_HOSTS)[number]);
}

/** Whether the model is the `:free` variant of another. */
export function isFreeVariant(model: PublicModel): boolean {
  return model.id.endsWith(':free');
}

/** 0–3 distinct hosts beside the author; `:free` models get at least one. */
export function extraHosts(model: PublicModel): string[] {
  const author = authorTag(model.id);
  const pool = (CLOSED_MODEL_AUTHORS.has(author) ? CLOUD_HOSTS : OPEN_WEIGHT_HOSTS).filter(
    (host) => host !== author && !(author === 'mistralai' && host === 'mistral'),
  );
  const wanted = Math.max(isFreeVariant(model) ? 1 : 0, hash(`${model.id}|extra-count`) % 4);
  return [...pool]
    .sort((a, b) => hash(`${model.id}|host|${a}`) - hash(`${model.id}|host|${b}`) || a.localeCompare(b))
    .slice(0, wanted);
}

/** The data policy of a router model's endpoint. */
export const ROUTER_POLICY: DataPolicy = { training: false, retainsPrompts: false, zeroDataRetention: false };

/**
 * Spread per endpoint: 8% train (and retain), 25% retain only (30-day abuse monitoring),
 * 27% neither, 40% zero data retention. A `:free` model's first endpoint always trains: the
 * price of free inference.
 */
export function dataPolicyFor(model: PublicModel, tag: string, position: number): DataPolicy {
  if (position === 0 && isFreeVariant(model)) {
    return { training: true, retainsPrompts: true, zeroDataRetention: false };
  }
  const bucket = hash(`${model.id}|${tag}|policy`) % 100;
  if (bucket < 8) return { training: true, retainsPrompts: true, zeroDataRetention: false };
  if (bucket < 33) return { training: false, retainsPrompts: true, zeroDataRetention: false };
  if (bucket < 60) return { training: false, retainsPrompts: false, zeroDataRetention: false };
  return { training: false, retainsPrompts: false, zeroDataRetention: true };
}

/** About 6% EU only, 30% US and EU, the rest US only; EU-based hosts lean to the EU. */
export function regionsFor(model: PublicModel, tag: string): string[] {
  const bucket = hash(`${model.id}|${tag}|regions`) % 100;
  if (EU_HOSTS.has(tag)) return bucket < 30 ? ['eu'] : ['us', 'eu'];
  if (bucket < 6) return ['eu'];
  if (bucket < 36) return ['us', 'eu'];
  return ['us'];
}
