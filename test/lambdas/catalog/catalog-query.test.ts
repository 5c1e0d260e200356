import { InvalidInputError } from '../../../lambdas/errors';
import {
  DEFAULT_LIMIT,
  MAX_LIMIT,
  nextPageLink,
  parseCatalogQuery,
  SORTS,
  type CatalogQuery,
} from '../../../lambdas/catalog/catalog-query';

const BASE_PATH = '/api/v1/models/user';

/** A query string as API Gateway passes it: the last value of each name, and every value. */
const parse = (params: Record<string, string> | null, multi?: Record<string, string[]>) =>
  parseCatalogQuery({ queryStringParameters: params, multiValueQueryStringParameters: multi ?? (params && Object.fromEntries(Object.entries(params).map(([name, value]) => [name, [value]]))) });

/** Calls `act` and returns what it threw (failing the test when it throws nothing). */
function thrownBy(act: () => unknown): unknown {
  try {
    act();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('parseCatalogQuery (docs/reference.md#the-catalog)', () => {
  describe('defaults', () => {
    it('with no parameters returns text modality, no sort and the full list', () => {
      const query = parse(null);

      expect(query).toEqual({ outputModalities: new Set(['text']), sort: null, page: null });
    });

    it('treats an empty parameter object like null', () => {
      expect(parse({})).toEqual({ outputModalities: new Set(['text']), sort: null, page: null });
    });

    it('returns the full list when offset and limit are both omitted, even with other parameters', () => {
      const query = parse({ sort: 'newest', output_modalities: 'image' });

      expect(query.page).toBeNull();
    });

    it('pages with the default limit 500 when only offset is given', () => {
      const query = parse({ offset: '40' });

      expect(query.page).toEqual({ offset: 40, limit: 500 });
      expect(DEFAULT_LIMIT).toBe(500);
    });

    it('pages from offset 0 when only limit is given', () => {
      const query = parse({ limit: '25' });

      expect(query.page).toEqual({ offset: 0, limit: 25 });
    });

    it('accepts the bounds of docs/reference.md#limits: limit 1 and 1000, offset 0', () => {
      expect(parse({ offset: '0', limit: '1' }).page).toEqual({ offset: 0, limit: 1 });
      expect(parse({ offset: '0', limit: '1000' }).page).toEqual({ offset: 0, limit: 1000 });
      expect(MAX_LIMIT).toBe(1000);
    });

    it('treats offset "null" as not given', () => {
      expect(parse({ offset: 'null' }).page).toBeNull();
      expect(parse({ offset: 'null', limit: '10' }).page).toEqual({ offset: 0, limit: 10 });
    });

    it('ignores unknown parameters', () => {
      expect(parse({ utm_source: 'x', cachebust: '1' })).toEqual({
        outputModalities: new Set(['text']),
        sort: null,
        page: null,
      });
    });
  });

  describe('sort', () => {
    it.each(SORTS.map((sort) => [sort]))('accepts %s', (sort) => {
      expect(parse({ sort }).sort).toBe(sort);
    });

    it('lists the twelve docs/reference.md#the-catalog sorts', () => {
      expect(SORTS).toHaveLength(12);
    });

    it('maps the spec wire name arena-elo-high-to-low to design-arena-elo-high-to-low', () => {
      expect(parse({ sort: 'arena-elo-high-to-low' }).sort).toBe('design-arena-elo-high-to-low');
    });

    it('treats an empty sort as no sort', () => {
      expect(parse({ sort: '' }).sort).toBeNull();
    });
  });

  describe('output_modalities', () => {
    it('returns null (every modality) for "all"', () => {
      expect(parse({ output_modalities: 'all' }).outputModalities).toBeNull();
    });

    it('parses a comma-separated list, trimming and lower-casing each part', () => {
      const query = parse({ output_modalities: 'text, IMAGE ,audio' });

      expect(query.outputModalities).toEqual(new Set(['text', 'image', 'audio']));
    });

    it('parses a single modality', () => {
      expect(parse({ output_modalities: 'embeddings' }).outputModalities).toEqual(new Set(['embeddings']));
    });
  });

  it.each(['offset', 'limit', 'sort', 'output_modalities'])('refuses %s given twice with a 400 naming it', (parameter) => {
    const error = thrownBy(() => parse({ [parameter]: '2' }, { [parameter]: ['1', '2'] }));

    expect(error).toMatchObject({ kind: 'invalid_input', message: `Invalid ${parameter}: must be given once`, metadata: { parameter } });
  });

  describe('invalid values are 400s naming the parameter (docs/reference.md#the-common-error-body, docs/reference.md#limits)', () => {
    const limitMessage = 'Invalid limit: must be an integer from 1 to 1000';
    const offsetMessage = `Invalid offset: must be an integer from 0 to ${Number.MAX_SAFE_INTEGER}`;
    const modalityMessage =
      'Invalid output_modalities: must be "all" or a comma-separated list of text, image, embeddings, audio, video, rerank, decisions, speech, transcription';
    const sortMessage = `Invalid sort: must be one of ${SORTS.join(', ')}`;

    it.each([
      ['limit', '0', limitMessage],
      ['limit', '1001', limitMessage],
      ['limit', '-1', limitMessage],
      ['limit', '1.5', limitMessage],
      ['limit', 'abc', limitMessage],
      ['limit', '1e2', limitMessage],
      ['limit', '', limitMessage],
      ['offset', '', offsetMessage],
      ['offset', '-1', offsetMessage],
      ['offset', 'x', offsetMessage],
      ['offset', '99999999999999999999', offsetMessage],
      ['output_modalities', 'hologram', modalityMessage],
      ['output_modalities', 'text,', modalityMessage],
      ['output_modalities', 'all,text', modalityMessage],
      ['sort', 'cheapest', sortMessage],
    ])('%s=%s', (parameter, value, message) => {
      const error = thrownBy(() => parse({ [parameter]: value }));

      expect(error).toBeInstanceOf(InvalidInputError);
      expect(error).toMatchObject({ kind: 'invalid_input', message, metadata: { parameter } });
    });
  });
});

describe('nextPageLink (docs/reference.md#the-model-entry)', () => {
  const paged = (offset: number, limit: number): CatalogQuery => ({
    outputModalities: new Set(['text']),
    sort: null,
    page: { offset, limit },
  });

  it('points at the next page and keeps the other parameters', () => {
    const raw = { sort: 'newest', output_modalities: 'text,image', offset: '0', limit: '50' };

    const link = nextPageLink(BASE_PATH, paged(0, 50), raw, 120);

    expect(link).toBe('/api/v1/models/user?sort=newest&output_modalities=text%2Cimage&offset=50&limit=50');
  });

  it('adds the limit when the request gave only an offset', () => {
    const link = nextPageLink(BASE_PATH, paged(10, 500), { offset: '10' }, 1000);

    expect(link).toBe('/api/v1/models/user?offset=510&limit=500');
  });

  it('is null on the last page, including when the page ends exactly at the total', () => {
    expect(nextPageLink(BASE_PATH, paged(100, 50), { offset: '100', limit: '50' }, 150)).toBeNull();
    expect(nextPageLink(BASE_PATH, paged(100, 50), { offset: '100', limit: '50' }, 120)).toBeNull();
  });

  it('is not null when one model remains after the page', () => {
    expect(nextPageLink(BASE_PATH, paged(100, 50), { offset: '100', limit: '50' }, 151)).toBe(
      '/api/v1/models/user?offset=150&limit=50',
    );
  });

  it('is null for the full list', () => {
    const query: CatalogQuery = { outputModalities: new Set(['text']), sort: null, page: null };

    expect(nextPageLink(BASE_PATH, query, null, 421)).toBeNull();
  });
});
