import { SORTS } from '../../../lambdas/catalog/catalog-query';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';
import { API_BASE_PATH } from '../../../lambdas/routes';
import { OUTPUT_MODALITIES, type PublicModel } from '../../../lambdas/catalog/types';
import { startTestService, type TestService } from '../../support/local-service';

/**
 * The live responses of the catalog routes against the public OpenAPI document the
 * official clients are generated from (its wire format). The document is an
 * OpenAPI 3.1 file, so its schemas are JSON Schema 2020-12.
 */
const OPENAPI = parse(readFileSync(join(__dirname, '..', '..', 'fixtures', 'openapi.yaml'), 'utf8'));
const DOCUMENT_ID = 'https://modelgate.test/openapi.json';
const SNAPSHOT: PublicModel[] = JSON.parse(
  readFileSync(join(__dirname, '..', '..', '..', 'data', 'catalog-snapshot.json'), 'utf8'),
).data;

// Every sort value, and the neutral alias of the arena order (the wire names).
const SORT_VALUES = [...SORTS, 'arena-elo-high-to-low'];

/**
 * `ProviderName` lists the providers of the service the document describes; this gateway
 * has its own. The official SDK generated from the document decodes it as an open enum
 * (`openEnums.inboundSchema(ProviderName)`), so it is checked as a plain string here.
 */
function withOpenProviderNames(components: Record<string, any>) {
  const { enum: _closed, ...providerName } = components.schemas.ProviderName;
  return { ...components, schemas: { ...components.schemas, ProviderName: providerName } };
}

function compileValidators() {
  const ajv = new Ajv2020({ strict: false, allErrors: true, logger: false });
  addFormats(ajv);
  // OpenAPI number formats that JSON Schema does not define: annotations only.
  for (const format of ['double', 'float', 'int32', 'int64']) ajv.addFormat(format, true);
  // `#/components/schemas/...` refs resolve against the document's own $id.
  ajv.addSchema({ $id: DOCUMENT_ID, components: withOpenProviderNames(OPENAPI.components) });
  const ref = (name: string) => ({ $ref: `${DOCUMENT_ID}#/components/schemas/${name}` });
  return {
    list: ajv.compile(ref('ModelsListResponse')),
    endpoints: ajv.compile({ type: 'object', required: ['data'], properties: { data: ref('ListEndpointsResponse') } }),
    badRequest: ajv.compile(ref('BadRequestResponse')),
    unauthorized: ajv.compile(ref('UnauthorizedResponse')),
    notFound: ajv.compile(ref('NotFoundResponse')),
  };
}

/** Validates and, on failure, shows ajv's errors rather than a bare `false`. */
function expectValid(validate: ValidateFunction, body: unknown): void {
  const valid = validate(body);
  expect(validate.errors?.slice(0, 10) ?? []).toEqual([]);
  expect(valid).toBe(true);
}

/** Properties a schema declares: a field outside them would be invented. */
function declaredProperties(name: string): string[] {
  return Object.keys(OPENAPI.components.schemas[name].properties);
}

describe('catalog routes conform to the public OpenAPI document', () => {
  let service: TestService;
  let key: string;
  let validators: ReturnType<typeof compileValidators>;
  let all: PublicModel[];

  beforeAll(async () => {
    validators = compileValidators();
    service = await startTestService();
    key = service.runtime.demo.keys.workspace;
    const response = await service.call('/models/user?output_modalities=all', { key });
    expect(response.status).toBe(200);
    all = response.body.data;
  });
  afterAll(async () => {
    await service?.stop();
  });

  describe('GET /models/user matches ModelsListResponse', () => {
    it.each([
      ['the default (text) list', ''],
      ['every output modality', '?output_modalities=all'],
      ...OUTPUT_MODALITIES.map((modality) => [`${modality} output`, `?output_modalities=${modality}`]),
      ['several modalities', '?output_modalities=image,audio'],
      ['a page', '?offset=100&limit=50&output_modalities=all'],
      ['the last page', '?offset=400&limit=100&output_modalities=all'],
      ['a page past the end', '?offset=5000&limit=10'],
    ])('%s', async (_name, query) => {
      const response = await service.call(`/models/user${query}`, { key });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expectValid(validators.list, response.body);
    });

    it.each(SORT_VALUES)('sorted by %s', async (sort) => {
      const response = await service.call(`/models/user?output_modalities=all&sort=${sort}`, { key });
      expect(response.status).toBe(200);
      expectValid(validators.list, response.body);
      expect(response.body.total_count).toBe(all.length);
    });

    it('through the EU hostname', async () => {
      const response = await service.call('/models/user?output_modalities=all', { key, host: 'eu.localhost' });
      expect(response.status).toBe(200);
      expectValid(validators.list, response.body);
      expect(response.body.total_count).toBeGreaterThan(0);
      expect(response.body.total_count).toBeLessThan(all.length);
    });

    it('returns every snapshot model to an unrestricted caller, with only fields the schema declares', () => {
      expect(all.map((m) => m.id)).toEqual(SNAPSHOT.map((m) => m.id));
      const modelFields = new Set(declaredProperties('Model'));
      for (const model of all) {
        expect(Object.keys(model).filter((field) => !modelFields.has(field))).toEqual([]);
      }
    });
  });

  describe('omitted, not invented (docs/reference.md#the-model-entry)', () => {
    const snapshotById = new Map(SNAPSHOT.map((m) => [m.id, m]));

    it('has benchmarks exactly for the models the snapshot has them for, unchanged', () => {
      for (const model of all) {
        const source = snapshotById.get(model.id)!;
        expect({ id: model.id, benchmarks: model.benchmarks }).toEqual({ id: model.id, benchmarks: source.benchmarks });
        expect('benchmarks' in model).toBe('benchmarks' in source);
      }
      expect(all.filter((m) => m.benchmarks).length).toBe(SNAPSHOT.filter((m) => m.benchmarks).length);
    });

    it('never gives router models reasoning, and gives the others reasoning exactly as the snapshot does', () => {
      const routers = all.filter((m) => m.id.startsWith('openrouter/'));
      expect(routers.length).toBeGreaterThan(0);
      for (const router of routers) expect(router).not.toHaveProperty('reasoning');
      for (const model of all) {
        const source = snapshotById.get(model.id)!;
        expect('reasoning' in model).toBe('reasoning' in source);
        expect({ id: model.id, reasoning: model.reasoning }).toEqual({ id: model.id, reasoning: source.reasoning });
      }
    });

    it('points every alias at the id of a model in the catalog', () => {
      const ids = new Set(all.map((m) => m.id));
      const aliases = all.filter((m) => m.alias_target);
      expect(aliases.length).toBeGreaterThan(0);
      for (const alias of aliases) {
        expect({ alias: alias.id, targetListed: ids.has(alias.alias_target!.slug) }).toEqual({ alias: alias.id, targetListed: true });
        expect(alias.alias_target!.name).toEqual(expect.any(String));
      }
      const sourceAliases = SNAPSHOT.filter((m) => m.alias_target).map((m) => m.id);
      expect(aliases.map((m) => m.id)).toEqual(sourceAliases);
    });
  });

  describe('GET /models/{author}/{slug}/endpoints matches ListEndpointsResponse', () => {
    it('resolves links.details of every model on a page of the listing', async () => {
      const page = await service.call('/models/user?offset=0&limit=100&output_modalities=all', { key });
      expect(page.status).toBe(200);
      for (const model of page.body.data as PublicModel[]) {
        expect(model.links.details.startsWith(`${API_BASE_PATH}/models/`)).toBe(true);
        const detail = await service.call(model.links.details.slice(API_BASE_PATH.length), { key });
        expect({ link: model.links.details, status: detail.status }).toEqual({ link: model.links.details, status: 200 });
        expectValid(validators.endpoints, detail.body);
        expect(detail.body.data.endpoints.length).toBeGreaterThan(0);
        for (const endpoint of detail.body.data.endpoints) {
          // Internal routing facts stay inside (catalog-api `publicEndpoint`).
          expect(endpoint).not.toHaveProperty('dataPolicy');
          expect(endpoint).not.toHaveProperty('regions');
          expect(endpoint).toMatchObject({ model_id: expect.any(String), model_name: expect.any(String) });
        }
      }
    });

    it.each(['openai/gpt-4o', 'openai/gpt-4o:batch', 'openrouter/auto', '~anthropic/claude-sonnet-latest', 'mistralai/mistral-large-2512'])(
      'describes %s',
      async (id) => {
        const model = all.find((m) => m.id === id);
        if (!model) throw new Error(`${id} is not in the catalog snapshot`);
        const detail = await service.call(model.links.details.slice(API_BASE_PATH.length), { key });
        expect(detail.status).toBe(200);
        expectValid(validators.endpoints, detail.body);
      },
    );
  });

  describe('error bodies', () => {
    it.each([
      ['limit', '?limit=0'],
      ['limit', '?limit=1001'],
      ['limit', '?limit=ten'],
      ['offset', '?offset=-1'],
      ['output_modalities', '?output_modalities=smell'],
      ['sort', '?sort=alphabetical'],
    ])('400 for a bad %s (%s) matches BadRequestResponse', async (parameter, query) => {
      const response = await service.call(`/models/user${query}`, { key });
      expect(response.status).toBe(400);
      expectValid(validators.badRequest, response.body);
      expect(response.body.error).toMatchObject({ code: 400, metadata: { parameter } });
    });

    it.each([
      ['no key', undefined],
      ['an unknown key', `sk-mg-v1-${'0'.repeat(64)}`],
      ['a malformed key', 'not-a-key'],
    ])('401 for %s matches UnauthorizedResponse', async (_name, badKey) => {
      for (const path of ['/models/user', '/models/openai/gpt-4o/endpoints']) {
        const response = await service.call(path, { key: badKey });
        expect(response.status).toBe(401);
        expectValid(validators.unauthorized, response.body);
        expect(response.body.error.code).toBe(401);
      }
    });

    it('404 for an unknown model matches NotFoundResponse', async () => {
      const response = await service.call('/models/nobody/no-such-model/endpoints', { key });
      expect(response.status).toBe(404);
      expectValid(validators.notFound, response.body);
      expect(response.body).toEqual({ error: { code: 404, message: 'Model nobody/no-such-model not found' } });
    });
  });
});
