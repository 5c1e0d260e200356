import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type { Principal } from '../accounts/types';
import type { RequestBodies, RequestQueries } from '../openapi/validators/management.generated';
import type { AccountsService } from '../accounts/accounts-service';
import type { AuthenticationDeps } from '../accounts/authenticate';
import type { ExchangeEventStore } from '../federation/exchange-events';
import type { FederationService } from '../federation/federation-service';
import type { PolicyTesterDeps } from '../federation/policy-tester';
import type { UsageStore } from '../usage/usage';

/** What an address-rate check answers: allowed, or when to retry (whole seconds). */
export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export interface ManagementDeps extends AuthenticationDeps {
  service: AccountsService;
  federation: FederationService;
  /** The policy tester's exchange decision (never mints, records nothing). */
  policyTester: PolicyTesterDeps;
  /**
   * Counts one hit against the token endpoint's per-address limit (SPEC 7.2, 8): the policy
   * tester verifies tokens as the exchange does, so it shares that budget and cannot be
   * used to get around it.
   */
  exchangeRate: (sourceIp: string) => Promise<RateDecision>;
  usage: Pick<UsageStore, 'keyUsage' | 'organizationUsage' | 'activity'>;
  /** Token exchange events (workload identity). */
  exchangeEvents: ExchangeEventStore;
}

/** What an operation of the management API gets once the caller may call it and its schemas accept the request. */
export interface OperationRequest<Id extends string = string> {
  /** The authenticated caller, with the access its route declares. */
  principal: Principal;
  event: APIGatewayProxyEvent;
  /** Path parameters, decoded. */
  params: Record<string, string>;
  /** The JSON body, as its route's schema accepted it. */
  body: Id extends keyof RequestBodies ? RequestBodies[Id] : undefined;
  /** The declared query parameters, as its route's schemas accepted them. */
  query: Id extends keyof RequestQueries ? RequestQueries[Id] : Record<string, never>;
  deps: ManagementDeps;
}

/** The handler of one route: call one domain function, format the reply (STYLE 1). */
export type Operation<Id extends string = string> = (request: OperationRequest<Id>) => Promise<APIGatewayProxyResult>;

/** The handlers of a resource's routes, one per operation id its route file declares. */
export type Operations<Routes extends readonly { operationId: string }[]> = { readonly [Id in Routes[number]['operationId']]: Operation<Id> };

/** Every operation works on the caller's own organization only. */
export const orgOf = (principal: Principal): string => principal.organization.id;
