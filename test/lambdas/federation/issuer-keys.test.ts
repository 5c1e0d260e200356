import type { JWK } from 'jose';
import { DocumentFetchError, type JsonDocument } from '../../../lambdas/federation/https-json-fetch';
import { CachingIssuerKeySource } from '../../../lambdas/federation/issuer-keys';
import { makeIssuer as issuer } from '../../support/federation-fixtures';
import { FixedClock } from '../../support/fixed-clock';

const ISSUER_URL = 'https://idp.example.com/tenant';
const DISCOVERY = `${ISSUER_URL}/.well-known/openid-configuration`;
const JWKS_URI = 'https://keys.idp.example.com/jwks';

const key = (kid: string): JWK => ({ kty: 'EC', crv: 'P-256', x: 'x', y: 'y', kid });

/** A publisher whose answers tests change; counts what is fetched. */
class FakePublisher {
  calls: string[] = [];
  documents = new Map<string, JsonDocument | Error>();
  constructor() {
    this.documents.set(DISCOVERY, { body: { issuer: ISSUER_URL, jwks_uri: JWKS_URI }, maxAgeSeconds: null });
    this.publish([key('k1')], 600);
  }
  publish(keys: JWK[], maxAgeSeconds: number | null) {
    this.documents.set(JWKS_URI, { body: { keys }, maxAgeSeconds });
  }
  fail(url: string, message = 'connection refused') {
    this.documents.set(url, new DocumentFetchError(`${url}: ${message}`));
  }
  fetchJson = async (url: string): Promise<JsonDocument> => {
    this.calls.push(url);
    const answer = this.documents.get(url);
    if (!answer) throw new DocumentFetchError(`${url}: answered HTTP 404`);
    if (answer instanceof Error) throw answer;
    return answer;
  };
}

let publisher: FakePublisher;
let clock: FixedClock;
let source: CachingIssuerKeySource;
const discovered = issuer({ issuerUrl: ISSUER_URL });
const kids = (lookup: Awaited<ReturnType<CachingIssuerKeySource['getKeys']>>) => (lookup.status === 'available' ? lookup.set.keys.map((k) => k.kid) : lookup.problem);

beforeEach(() => {
  publisher = new FakePublisher();
  clock = new FixedClock();
  source = new CachingIssuerKeySource({ fetchJson: publisher.fetchJson, clock });
});

describe('CachingIssuerKeySource: where keys come from', () => {
  it('uses the inline JWK Set without fetching, keeping public members only', async () => {
    const lookup = await source.getKeys(issuer({ jwks: { keys: [{ ...key('inline'), d: 'private-part' }] } }), 'inline');
    expect(lookup).toEqual({ status: 'available', set: { keys: [key('inline')], origin: 'inline JWK Set', fetchedAt: null } });
    expect(publisher.calls).toEqual([]);
  });

  it('follows discovery to jwks_uri (the issuer path kept, a trailing slash dropped)', async () => {
    const lookup = await source.getKeys(discovered, 'k1');
    expect(lookup).toEqual({ status: 'available', set: { keys: [key('k1')], origin: JWKS_URI, fetchedAt: clock.now().toISOString() } });
    expect(publisher.calls).toEqual([DISCOVERY, JWKS_URI]);
    publisher.documents.set(DISCOVERY, { body: { issuer: `${ISSUER_URL}/`, jwks_uri: JWKS_URI }, maxAgeSeconds: null });
    expect(kids(await new CachingIssuerKeySource({ fetchJson: publisher.fetchJson, clock }).getKeys(issuer({ issuerUrl: `${ISSUER_URL}/` }), null))).toEqual(['k1']);
    expect(publisher.calls[2]).toBe(DISCOVERY);
  });

  it('fetches jwks_url directly when the issuer sets one', async () => {
    publisher.documents.set('https://idp.example.com/keys', { body: { keys: [key('direct')] }, maxAgeSeconds: null });
    expect(kids(await source.getKeys(issuer({ issuerUrl: ISSUER_URL, jwksUrl: 'https://idp.example.com/keys' }), null))).toEqual(['direct']);
    expect(publisher.calls).toEqual(['https://idp.example.com/keys']);
  });

  it.each([
    ['names another issuer', { issuer: 'https://evil.example.com/tenant', jwks_uri: JWKS_URI }, `${DISCOVERY}: the discovery document names issuer "https://evil.example.com/tenant", not "${ISSUER_URL}"`],
    ['has no jwks_uri', { issuer: ISSUER_URL }, `${DISCOVERY}: the discovery document has no https:// jwks_uri`],
    ['points at plain http', { issuer: ISSUER_URL, jwks_uri: 'http://idp.example.com/jwks' }, `${DISCOVERY}: the discovery document has no https:// jwks_uri`],
    ['is not an object', [ISSUER_URL], `${DISCOVERY}: the discovery document is not a JSON object`],
  ])('is unavailable when the discovery document %s', async (_name, body, problem) => {
    publisher.documents.set(DISCOVERY, { body, maxAgeSeconds: null });
    expect(await source.getKeys(discovered, 'k1')).toEqual({ status: 'unavailable', problem });
    expect(publisher.calls).toEqual([DISCOVERY]);
  });

  it.each([
    ['not a JWK Set', { kid: 'k1' }, `${JWKS_URI}: not a JWK Set (no "keys" array)`],
    ['too many keys', { keys: Array.from({ length: 101 }, (_, i) => key(`k${i}`)) }, `${JWKS_URI}: more than 100 keys`],
  ])('is unavailable when the key set is %s', async (_name, body, problem) => {
    publisher.documents.set(JWKS_URI, { body, maxAgeSeconds: null });
    expect(await source.getKeys(discovered, 'k1')).toEqual({ status: 'unavailable', problem });
  });
});

describe('CachingIssuerKeySource: caching', () => {
  it('caches for max-age, clamped to at least 5 minutes', async () => {
    publisher.publish([key('k1')], 10);
    await source.getKeys(discovered, 'k1');
    clock.advance(299_000);
    await source.getKeys(discovered, 'k1');
    expect(publisher.calls).toHaveLength(2);
    clock.advance(1_000);
    await source.getKeys(discovered, 'k1');
    expect(publisher.calls).toHaveLength(4);
  });

  it('caches for max-age, clamped to at most 24 hours', async () => {
    publisher.publish([key('k1')], 7 * 86_400);
    await source.getKeys(discovered, 'k1');
    clock.advance(86_400_000 - 1);
    await source.getKeys(discovered, 'k1');
    expect(publisher.calls).toHaveLength(2);
    clock.advance(1);
    await source.getKeys(discovered, 'k1');
    expect(publisher.calls).toHaveLength(4);
  });

  it('honours a max-age between the bounds', async () => {
    publisher.publish([key('k1')], 3600);
    await source.getKeys(discovered, 'k1');
    clock.advance(3_599_000);
    await source.getKeys(discovered, 'k1');
    expect(publisher.calls).toHaveLength(2);
    clock.advance(1_000);
    await source.getKeys(discovered, 'k1');
    expect(publisher.calls).toHaveLength(4);
  });

  it('refetches once for an unknown kid, then at most once per 30 s however many kids are tried', async () => {
    await source.getKeys(discovered, 'k1');
    publisher.publish([key('k1'), key('k2')], 600);
    clock.advance(30_000);
    expect(kids(await source.getKeys(discovered, 'k2'))).toEqual(['k1', 'k2']);
    expect(publisher.calls).toHaveLength(4);
    for (let i = 0; i < 50; i++) await source.getKeys(discovered, `random-${i}`);
    expect(publisher.calls).toHaveLength(4);
    clock.advance(30_000);
    await source.getKeys(discovered, 'random-again');
    expect(publisher.calls).toHaveLength(6);
  });

  it('does not refetch for an unknown kid within 30 s of the last fetch', async () => {
    await source.getKeys(discovered, 'k1');
    publisher.publish([key('k1'), key('k2')], 600);
    clock.advance(29_999);
    expect(kids(await source.getKeys(discovered, 'k2'))).toEqual(['k1']);
    expect(publisher.calls).toHaveLength(2);
  });

  it('shares one fetch among concurrent lookups', async () => {
    const results = await Promise.all(Array.from({ length: 20 }, () => source.getKeys(discovered, 'k1')));
    expect(results.every((r) => r.status === 'available')).toBe(true);
    expect(publisher.calls).toEqual([DISCOVERY, JWKS_URI]);
  });

  it('keeps separate entries when the issuer configuration changes', async () => {
    await source.getKeys(discovered, 'k1');
    publisher.documents.set('https://idp.example.com/other', { body: { keys: [key('other')] }, maxAgeSeconds: null });
    expect(kids(await source.getKeys({ ...discovered, jwksUrl: 'https://idp.example.com/other' }, null))).toEqual(['other']);
  });
});

describe('CachingIssuerKeySource: failures', () => {
  it('is unavailable with the reason when nothing is cached, and retries no sooner than 5 s', async () => {
    publisher.fail(JWKS_URI);
    expect(await source.getKeys(discovered, 'k1')).toEqual({ status: 'unavailable', problem: `${JWKS_URI}: connection refused` });
    publisher.publish([key('k1')], 600);
    clock.advance(4_999);
    expect((await source.getKeys(discovered, 'k1')).status).toBe('unavailable');
    expect(publisher.calls).toHaveLength(2);
    clock.advance(1);
    expect((await source.getKeys(discovered, 'k1')).status).toBe('available');
    expect(publisher.calls).toHaveLength(4);
  });

  it('keeps using the cached set when a refresh fails, for up to 24 hours after it was fetched', async () => {
    await source.getKeys(discovered, 'k1');
    publisher.fail(DISCOVERY);
    clock.advance(600_000);
    expect(kids(await source.getKeys(discovered, 'k1'))).toEqual(['k1']);
    expect(publisher.calls).toHaveLength(3);
    // A failed refresh is not retried on every exchange.
    clock.advance(29_000);
    await source.getKeys(discovered, 'k1');
    expect(publisher.calls).toHaveLength(3);
    clock.advance(86_400_000 - 629_000);
    expect(kids(await source.getKeys(discovered, 'k1'))).toEqual(['k1']);
    clock.advance(1);
    expect(await source.getKeys(discovered, 'k1')).toEqual({ status: 'unavailable', problem: `${DISCOVERY}: connection refused` });
  });

  it('keeps the cached set when a refetch for an unknown kid fails', async () => {
    await source.getKeys(discovered, 'k1');
    publisher.fail(JWKS_URI, 'answered HTTP 500');
    clock.advance(30_000);
    expect(kids(await source.getKeys(discovered, 'k9'))).toEqual(['k1']);
  });

  it('lets an unexpected error (a bug, not a publisher failure) propagate', async () => {
    publisher.documents.set(DISCOVERY, new TypeError('boom'));
    await expect(source.getKeys(discovered, 'k1')).rejects.toThrow('boom');
  });
});
