import { isServiceBaseUrl } from '../hostname';

/** The provider APIs the gateway speaks besides the public one (docs/providers.md). */
export const PROVIDER_APIS = ['openai', 'anthropic', 'bedrock'] as const;
/** One provider API. */
export type ProviderApi = (typeof PROVIDER_APIS)[number];

/**
 * An upstream that speaks a provider's own API: where it is, and the provider's id of each
 * catalog model it serves. Read once from the configuration, frozen, keyed without a prototype.
 */
export interface ApiTarget {
  readonly api: ProviderApi;
  /** Without trailing slash; absent: the API's own address (see {@link targetBaseUrl}). */
  readonly baseUrl?: string;
  /** Bedrock's region; absent: the function's own. */
  readonly region?: string;
  /** Catalog model id to the provider's model id (a Bedrock model id, inference profile id or ARN). */
  readonly models: Readonly<Record<string, string>>;
}

/**
 * Where one provider's completions go: a base URL of an upstream that speaks the public API and
 * takes catalog ids, the development provider's name, or a provider API ({@link ApiTarget}).
 */
export type UpstreamTarget = string | ApiTarget;

/** A target the configuration refuses; the message names what is wrong, the caller names the entry. */
export class TargetProblem extends Error {}

const TARGET_MEMBERS = new Set(['api', 'baseUrl', 'region', 'models']);
const REGION = /^[a-z]{2}(-[a-z]+)+-\d{1,2}$/;
/** Bedrock model ids, inference profile ids and ARNs; OpenAI's and Anthropic's model names. */
const PROVIDER_MODEL_ID = /^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,2047}$/;

/**
 * An object entry of `inferenceUpstreams` in its normal form, or a {@link TargetProblem}: a known
 * `api`; a base URL as every upstream's (`https://`, `http://` on a loopback host), its trailing
 * slashes dropped; a region name; model ids that are strings of the characters ids and ARNs use.
 */
export function readApiTarget(raw: Record<string, unknown>): ApiTarget {
  for (const member of Object.keys(raw)) {
    if (!TARGET_MEMBERS.has(member)) throw new TargetProblem(`has an unknown member "${member}" (known: api, baseUrl, region, models)`);
  }
  const api = raw.api;
  if (typeof api !== 'string' || !(PROVIDER_APIS as readonly string[]).includes(api)) {
    throw new TargetProblem(`"api" must be one of ${PROVIDER_APIS.join(', ')}, got ${JSON.stringify(api)}`);
  }
  const target: { -readonly [K in keyof ApiTarget]: ApiTarget[K] } = { api: api as ProviderApi, models: readModels(raw.models) };
  if (raw.baseUrl !== undefined) {
    if (typeof raw.baseUrl !== 'string' || !isServiceBaseUrl(raw.baseUrl, true)) {
      throw new TargetProblem(`"baseUrl" must be an https:// URL (http:// on a loopback host), got ${JSON.stringify(raw.baseUrl)}`);
    }
    target.baseUrl = raw.baseUrl.replace(/\/+$/, '');
  }
  if (raw.region !== undefined) {
    if (api !== 'bedrock') throw new TargetProblem(`"region" is for the bedrock api only`);
    if (typeof raw.region !== 'string' || !REGION.test(raw.region)) throw new TargetProblem(`"region" must be an AWS region name, got ${JSON.stringify(raw.region)}`);
    target.region = raw.region;
  }
  return Object.freeze(target);
}

function readModels(raw: unknown): Readonly<Record<string, string>> {
  const models: Record<string, string> = Object.create(null);
  if (raw === undefined) return Object.freeze(models);
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new TargetProblem('"models" must be an object of catalog model id to provider model id');
  for (const [catalogId, id] of Object.entries(raw)) {
    if (typeof id !== 'string' || !PROVIDER_MODEL_ID.test(id)) throw new TargetProblem(`"models"."${catalogId}" must be a provider model id, got ${JSON.stringify(id)}`);
    models[catalogId] = id;
  }
  return Object.freeze(models);
}

/**
 * The provider's id of a catalog model (docs/providers.md): the `models` entry; else, for OpenAI
 * and Anthropic, the catalog id after its author (`openai/gpt-4o-mini` is `gpt-4o-mini`) with
 * any variant suffix (`:free`) left out. Bedrock needs an entry: `undefined` without one.
 */
export function providerModelId(target: ApiTarget, catalogId: string): string | undefined {
  if (Object.prototype.hasOwnProperty.call(target.models, catalogId)) return target.models[catalogId];
  if (target.api === 'bedrock') return undefined;
  const slash = catalogId.indexOf('/');
  const name = catalogId.slice(slash + 1).replace(/:[a-z-]+$/, '');
  return name === '' ? undefined : name;
}

/** The address of a target's API: its `baseUrl`, else the provider's own for the region. */
export function targetBaseUrl(target: ApiTarget, region: string): string {
  if (target.baseUrl !== undefined) return target.baseUrl;
  switch (target.api) {
    case 'openai':
      return 'https://api.openai.com/v1';
    case 'anthropic':
      return 'https://api.anthropic.com/v1';
    case 'bedrock':
      return `https://bedrock-runtime.${target.region ?? region}.amazonaws.com`;
  }
}
