import type { Principal } from '../accounts/types';
import type { RateDecision, RouteOf, RouteRequest, Operation as RouteOperation } from '../http/dispatcher';
import type { RouteDefinition } from '../route-definition';
import type { RequestBodies, RequestQueries } from '../openapi/validators/management.generated';
import type { AccountsService } from '../accounts/accounts-service';
import type { AuthenticationDeps } from '../credentials/authenticate';
import type { LedgerSeeds } from '../spending/ledger-seeds';
import type { ExchangeEventStore } from '../federation/exchange-events';
import type { FederationService } from '../federation/federation-service';
import type { PolicyTesterDeps } from '../federation/policy-tester';
import type { GenerationStore } from '../usage/generations';
import type { UsageStore } from '../usage/usage';

/** What the management operations use: the accounts and federation services, the usage and event stores, the policy tester and the exchange's rate limit. */
export interface ManagementDeps extends AuthenticationDeps {
  service: AccountsService;
  federation: FederationService;
  /** The policy tester's exchange decision (never mints, records nothing). */
  policyTester: PolicyTesterDeps;
  /**
   * Counts one hit against the token endpoint's per-address limit (docs/reference.md#oauth-errors, docs/reference.md#limits): the policy
   * tester verifies tokens as the exchange does, so it shares that budget and cannot be
   * used to get around it.
   */
  exchangeRate: (sourceIp: string) => Promise<RateDecision>;
  usage: Pick<UsageStore, 'keyUsage' | 'foldMark' | 'activity'>;
  /** Completions by generation id (`GET /generation`). */
  generations: Pick<GenerationStore, 'get'>;
  /** Token exchange events (workload identity). */
  exchangeEvents: ExchangeEventStore;
  /** Seeds the ledgers of the spending limits a change has just set (lambdas/spending/ledger-seeds.ts); none: their first requests start them. */
  ledgerSeeds?: LedgerSeeds;
}

/**
 * What an operation of the management API gets once the caller may call it and its schemas
 * accept the request (lambdas/http/dispatcher.ts).
 */
export type OperationRequest<R extends RouteDefinition = RouteDefinition> = RouteRequest<R, ManagementDeps, RequestQueries, RequestBodies>;

/** The handler of one route: call one domain function, return its result (handlers only wire); the route's declared status answers it. */
export type Operation<R extends RouteDefinition = RouteDefinition> = RouteOperation<OperationRequest<R>>;

/** The operations of the routes a route file declares, one per operation id. */
export type Operations<Routes extends readonly RouteDefinition[]> = { readonly [Id in Routes[number]['operationId']]: Operation<RouteOf<Routes[number], Id>> };

/** Every operation works on the caller's own organization only. */
export const orgOf = (principal: Principal): string => principal.organization.id;
