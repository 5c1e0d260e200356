import { IssuerUrlTakenError, type FederationStore } from '../../lambdas/federation/federation-store';
import { makeIssuer, makePolicy } from './federation-fixtures';

/**
 * What every {@link FederationStore} does, run against the DynamoDB store on the embedded
 * DynamoDB and against the in-memory store, so the fake others test with cannot drift.
 * `organization()` gives each test its own organization id (the store may be shared).
 */
export function describeFederationStoreContract(name: string, setup: () => { store: () => FederationStore; organization: () => string }) {
  describe(`${name}: federation store contract`, () => {
    const { store, organization } = setup();

    it('reads back an issuer by organization and id, and not from another organization', async () => {
      const org = organization();
      const issuer = makeIssuer({
        organizationId: org,
        jwks: { keys: [{ kty: 'EC', crv: 'P-256', x: 'x', y: 'y', kid: 'k1' }] },
        checkJti: true,
      });
      await store().createIssuer(issuer);
      expect(await store().getIssuer(org, issuer.id)).toEqual(issuer);
      expect(await store().getIssuer(organization(), issuer.id)).toBeUndefined();
    });

    it('keeps issuer URLs unique within an organization, character for character', async () => {
      const org = organization();
      await store().createIssuer(makeIssuer({ organizationId: org, issuerUrl: 'https://idp.example' }));
      await expect(store().createIssuer(makeIssuer({ organizationId: org, issuerUrl: 'https://idp.example' }))).rejects.toBeInstanceOf(
        IssuerUrlTakenError,
      );
      // A trailing slash is a different issuer; another organization may trust the same URL.
      await store().createIssuer(makeIssuer({ organizationId: org, issuerUrl: 'https://idp.example/' }));
      await store().createIssuer(makeIssuer({ organizationId: organization(), issuerUrl: 'https://idp.example' }));
      expect((await store().listIssuers(org)).map((i) => i.issuerUrl).sort()).toEqual(['https://idp.example', 'https://idp.example/']);
    });

    it('lists issuers oldest first, only the organization’s own', async () => {
      const org = organization();
      const later = makeIssuer({ organizationId: org, issuerUrl: 'https://b.example', createdAt: '2026-11-21T12:00:02.000Z' });
      const earlier = makeIssuer({ organizationId: org, issuerUrl: 'https://a.example', createdAt: '2026-11-21T12:00:01.000Z' });
      await store().createIssuer(later);
      await store().createIssuer(earlier);
      await store().createIssuer(makeIssuer({ organizationId: organization() }));
      expect((await store().listIssuers(org)).map((i) => i.id)).toEqual([earlier.id, later.id]);
    });

    it('updates an issuer only at the version read, and moves its URL claim', async () => {
      const org = organization();
      const issuer = makeIssuer({ organizationId: org, issuerUrl: 'https://old.example' });
      await store().createIssuer(issuer);
      const moved = { ...issuer, issuerUrl: 'https://new.example', version: 2, updatedAt: '2026-11-21T12:01:00.000Z' };
      expect(await store().updateIssuer(moved, 1)).toBe(true);
      expect(await store().updateIssuer({ ...moved, name: 'stale', version: 2 }, 1)).toBe(false);
      expect(await store().getIssuer(org, issuer.id)).toEqual(moved);
      // The old URL is free again; the new one is taken.
      await store().createIssuer(makeIssuer({ organizationId: org, issuerUrl: 'https://old.example' }));
      await expect(store().createIssuer(makeIssuer({ organizationId: org, issuerUrl: 'https://new.example' }))).rejects.toBeInstanceOf(
        IssuerUrlTakenError,
      );
    });

    it('refuses to move an issuer onto a URL another issuer holds', async () => {
      const org = organization();
      const a = makeIssuer({ organizationId: org, issuerUrl: 'https://a.example' });
      const b = makeIssuer({ organizationId: org, issuerUrl: 'https://b.example' });
      await store().createIssuer(a);
      await store().createIssuer(b);
      await expect(store().updateIssuer({ ...b, issuerUrl: 'https://a.example', version: 2 }, 1)).rejects.toBeInstanceOf(IssuerUrlTakenError);
      expect((await store().getIssuer(org, b.id))?.issuerUrl).toBe('https://b.example');
    });

    it('deletes an issuer, frees its URL, and reports a second delete as false', async () => {
      const org = organization();
      const issuer = makeIssuer({ organizationId: org });
      await store().createIssuer(issuer);
      expect(await store().deleteIssuer(organization(), issuer.id)).toBe(false);
      expect(await store().deleteIssuer(org, issuer.id)).toBe(true);
      expect(await store().deleteIssuer(org, issuer.id)).toBe(false);
      expect(await store().getIssuer(org, issuer.id)).toBeUndefined();
      await store().createIssuer(makeIssuer({ organizationId: org }));
    });

    it('reads a policy by id alone, as the token exchange does', async () => {
      const org = organization();
      const policy = makePolicy({
        organizationId: org,
        condition: 'subject.startsWith("repo:acme/")',
        claimChecks: { scopes: 'deploy', tokenType: null },
      });
      await store().createPolicy(policy);
      expect(await store().getPolicy(policy.id)).toEqual(policy);
      expect(await store().getPolicy(makePolicy().id)).toBeUndefined();
    });

    it('lists policies oldest first, narrowed by issuer on request', async () => {
      const org = organization();
      const issuerA = makeIssuer().id;
      const issuerB = makeIssuer().id;
      const p1 = makePolicy({ organizationId: org, issuerId: issuerB, createdAt: '2026-11-21T12:00:01.000Z' });
      const p2 = makePolicy({ organizationId: org, issuerId: issuerA, createdAt: '2026-11-21T12:00:02.000Z' });
      const p3 = makePolicy({ organizationId: org, issuerId: issuerA, createdAt: '2026-11-21T12:00:03.000Z' });
      for (const p of [p3, p1, p2]) await store().createPolicy(p);
      await store().createPolicy(makePolicy({ organizationId: organization(), issuerId: issuerA }));
      expect((await store().listPolicies(org)).map((p) => p.id)).toEqual([p1.id, p2.id, p3.id]);
      expect((await store().listPolicies(org, issuerA)).map((p) => p.id)).toEqual([p2.id, p3.id]);
    });

    it('updates a policy only at the version read: the second of two writers from one read loses', async () => {
      const org = organization();
      const policy = makePolicy({ organizationId: org });
      await store().createPolicy(policy);
      const paused = { ...policy, enabled: false, version: 2 };
      const renamed = { ...policy, name: 'renamed', version: 2 };
      expect(await store().updatePolicy(paused, 1)).toBe(true);
      expect(await store().updatePolicy(renamed, 1)).toBe(false);
      expect(await store().getPolicy(policy.id)).toEqual(paused);
      expect(await store().updatePolicy({ ...paused, organizationId: organization(), version: 3 }, 2)).toBe(false);
    });

    it('deletes a policy only within its organization', async () => {
      const org = organization();
      const policy = makePolicy({ organizationId: org });
      await store().createPolicy(policy);
      expect(await store().deletePolicy(organization(), policy.id)).toBe(false);
      expect(await store().deletePolicy(org, policy.id)).toBe(true);
      expect(await store().deletePolicy(org, policy.id)).toBe(false);
      expect(await store().getPolicy(policy.id)).toBeUndefined();
      expect(await store().updatePolicy({ ...policy, version: 2 }, 1)).toBe(false);
    });
  });
}
