import type { ApiKeyRecord, Organization } from '../../lambdas/accounts/types';
import { systemClock } from '../../lambdas/clock';
import { evaluateCondition } from '../../lambdas/federation/condition';
import type { ExchangeDependencies } from '../../lambdas/federation/evaluate-exchange';
import type { ExchangeEvent, ExchangeEventStore } from '../../lambdas/federation/exchange-events';
import { createIssuerKeySource } from '../../lambdas/federation/issuer-keys';
import type { FederationIssuer, FederationPolicy } from '../../lambdas/federation/types';
import { issuer, organization, workspaceKey } from './fixtures';

/** Deeply frozen: the exchange reads records, and a write to one would throw here. */
function frozen<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const member of Object.values(value)) frozen(member);
    Object.freeze(value);
  }
  return value;
}

function frozenReader(policies: FederationPolicy[], issuers: FederationIssuer[]): ExchangeDependencies['federation'] {
  const policyById = new Map(policies.map((p) => [p.id, frozen(structuredClone(p))]));
  const issuerById = new Map(issuers.map((i) => [i.id, frozen(structuredClone(i))]));
  return {
    getPolicy: async (id) => policyById.get(id),
    getIssuer: async (organizationId, id) => (issuerById.get(id)?.organizationId === organizationId ? issuerById.get(id) : undefined),
  };
}

function frozenAccounts(org: Organization, key: ApiKeyRecord): ExchangeDependencies['accounts'] {
  const [storedOrg, storedKey] = [frozen(structuredClone(org)), frozen(structuredClone(key))];
  return {
    getApiKey: async (hash) => (hash === storedKey.hash ? storedKey : undefined),
    getOrganization: async (id) => (id === storedOrg.id ? storedOrg : undefined),
  };
}

/**
 * What the evaluation reads, in memory: the records frozen (the exchange never changes what it
 * reads; a write would throw) and handed out as they are, since a read is I/O, which the
 * in-memory rows leave out; the issuer's keys inline.
 */
export function frozenEvaluation(policies: FederationPolicy[]): ExchangeDependencies {
  return {
    federation: frozenReader(policies, [issuer]),
    accounts: frozenAccounts(organization, workspaceKey),
    issuerKeys: createIssuerKeySource({ clock: systemClock, allowLoopback: false }),
    clock: systemClock,
    evaluateCondition,
  };
}

/** The last 1,024 events written, as written. */
export class RecentEvents implements ExchangeEventStore {
  private readonly recent: ExchangeEvent[] = [];
  private written = 0;

  async record(event: ExchangeEvent): Promise<void> {
    this.recent[this.written++ & 1023] = event;
  }

  async list(): ReturnType<ExchangeEventStore['list']> {
    return { events: this.recent.slice(), nextCursor: null };
  }
}
