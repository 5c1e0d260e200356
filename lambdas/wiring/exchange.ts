import { evaluateCondition } from '../federation/condition';
import { evaluateExchange } from '../federation/evaluate-exchange';
import type { IssuerKeySource } from '../federation/issuer-keys';
import { RememberingRateCounters, checkExchangeRate } from '../oauth/exchange-rate-limit';
import { DynamoAccountStore } from '../aws/dynamo-account-store';
import { DynamoFederationStore } from '../aws/dynamo-federation-store';
import { DynamoRateCounterStore } from '../aws/dynamo-rate-counter-store';
import type { ExchangeRateSettings, FunctionContext } from './context';

/**
 * Verification and the policy decision of a token exchange (docs/reference.md#subject-tokens, docs/reference.md#conditions), bound to the
 * function's stores: the token endpoint and the policy tester run this very evaluation.
 */
export function exchangeEvaluator(context: FunctionContext<'keys' | 'policies'>, issuerKeys: IssuerKeySource) {
  const deps = {
    federation: new DynamoFederationStore(context.documentClient, context.tables.policies, context.clock),
    accounts: new DynamoAccountStore(context.documentClient, context.tables.keys, { random: context.random }),
    issuerKeys,
    clock: context.clock,
    evaluateCondition,
  };
  return (request: Parameters<typeof evaluateExchange>[1]) => evaluateExchange(deps, request);
}

/** The token endpoint's per-address budget (docs/reference.md#limits), which the policy tester shares. */
export function exchangeRateCheck(context: FunctionContext<'rateCounters'>, settings: ExchangeRateSettings) {
  const counters = new RememberingRateCounters(new DynamoRateCounterStore(context.documentClient, context.tables.rateCounters));
  const limit = exchangeRateLimit(settings);
  return (sourceIp: string) => checkExchangeRate(counters, sourceIp, context.clock.now(), limit);
}

/** The limiter's own terms for the settings `exchangeRateLimit` and `exchangeRateWindowSeconds`. */
export const exchangeRateLimit = (settings: ExchangeRateSettings) => ({ limit: settings.exchangeRateLimit, windowSeconds: settings.exchangeRateWindowSeconds });
