import type { AccountStore } from '../accounts/account-store';
import type { ApiKeyRecord } from '../accounts/types';
import type { Clock } from '../clock';
import { EXCHANGE_STEP_NAMES, Refusal, type ExchangeEvaluation, type ExchangeStep, type ExchangeStepName, type SubjectClaims } from './exchange-types';
import type { IssuerKeySource } from './issuer-keys';
import { decodeUnverified } from './subject-token';
import { verifySubjectToken } from './subject-token-verification';
import { isNumericDate, wholeSeconds } from '../credentials/token-time-rules';
import { MAX_CLAIM_CHARS, MAX_SCOPES } from './limits';
import { hasFederationEntitlement, type ConditionVariables, type FederationIssuer, type FederationPolicy, type FederationReader } from './types';

/**
 * Decides whether a subject token may be exchanged under a federation policy (docs/reference.md#subject-tokens, docs/reference.md#conditions)
 * and says why, step by step. The token endpoint answers from `result` and `reason`; the
 * policy tester shows `steps` to the organization's admin. A refusal is a result, never an
 * exception: only an infrastructure failure (a store that cannot be read) throws.
 */

/** What an evaluation reads: the policies and issuers, the acting key and its organization, the issuer's keys. */
export interface ExchangeDependencies {
  federation: FederationReader;
  accounts: Pick<AccountStore, 'getApiKey' | 'getOrganization'>;
  issuerKeys: IssuerKeySource;
  clock: Clock;
  /** docs/reference.md#conditions: evaluates a saved condition; throws when evaluation fails. */
  evaluateCondition: (source: string, variables: ConditionVariables) => boolean;
}

/** The exchange request: the subject token, the policy it names, and when it may be evaluated. */
export interface ExchangeRequestInput {
  subjectToken: string;
  policyId: string;
  /**
   * Settles when the request may be evaluated (the token endpoint's per-address limit): the
   * policy is read beside it, one round trip rather than two, and nothing else happens before
   * it resolves. A rejection ends the evaluation with it. @default evaluated at once
   */
  admitted?: Promise<unknown>;
  /**
   * Called once the request is admitted and the policy read has answered (or failed), as the
   * evaluation's next reads start: what the caller runs beside them takes no stage of its own.
   */
  onPolicyRead?: () => void;
}

/** Longer than any identifier the service generates; never sent to a store. */
const MAX_POLICY_ID_CHARS = 128;

/** The steps in evaluation order (the policy tester lists them all). */
export const EXCHANGE_STEPS: readonly ExchangeStepName[] = EXCHANGE_STEP_NAMES;

/** Collects steps in order; a refusal closes the list with `not_reached` for the rest. */
class Trace {
  readonly steps: ExchangeStep[] = [];
  readonly outcome: Omit<ExchangeEvaluation, 'result' | 'reason' | 'steps'> = {
    policy: null,
    issuer: null,
    organization: null,
    key: null,
    claims: null,
    unverifiedSubject: null,
  };

  passed(name: ExchangeStepName, detail: string): void {
    this.steps.push({ name, status: 'passed', detail });
  }

  refused(name: ExchangeStepName, refusal: Refusal): ExchangeEvaluation {
    this.steps.push({ name, status: 'failed', detail: refusal.detail });
    for (const later of EXCHANGE_STEPS.slice(EXCHANGE_STEPS.indexOf(name) + 1)) {
      this.steps.push({ name: later, status: 'not_reached', detail: 'not evaluated: an earlier step failed' });
    }
    return { result: 'fail', reason: refusal.reason, steps: this.steps, ...this.outcome };
  }

  accepted(): ExchangeEvaluation {
    return { result: 'pass', reason: null, steps: this.steps, ...this.outcome };
  }
}

/**
 * Evaluates one exchange request, every step in {@link EXCHANGE_STEPS} order: `pass`, or `fail`
 * with the reason and the step that refused; steps after a refusal are `not_reached`.
 */
export async function evaluateExchange(deps: ExchangeDependencies, input: ExchangeRequestInput): Promise<ExchangeEvaluation> {
  const trace = new Trace();
  // The policy is read first, beside whatever admits the request; every outcome needs it (a
  // refusal before the rules is recorded for the policy's organization).
  const policyRead = plausiblePolicyId(input.policyId) ? deps.federation.getPolicy(input.policyId) : Promise.resolve(undefined);
  policyRead.catch(() => undefined);
  await input.admitted;
  await policyRead.catch(() => undefined);
  input.onPolicyRead?.();

  const refuseBeforeRules = async (refusal: Refusal) => {
    trace.outcome.policy = (await policyRead) ?? null;
    return trace.refused('size_limits', refusal);
  };

  // docs/reference.md#limits: decoded without trusting anything, checked before any rule runs.
  const token = decodeUnverified(input.subjectToken);
  if ('problem' in token) return refuseBeforeRules(new Refusal('malformed_token', `The token cannot be decoded: ${token.problem}.`));
  trace.outcome.unverifiedSubject = unverifiedSubject(token.payload);
  const tooLarge = checkSizes(token.payload);
  if (tooLarge) return refuseBeforeRules(tooLarge);
  trace.passed('size_limits', `sub, each aud value and each scopes entry are within ${MAX_CLAIM_CHARS} characters, with at most ${MAX_SCOPES} scopes.`);

  const state = await checkPolicyState(deps, input.policyId, await policyRead, trace);
  if (state instanceof Refusal) return trace.refused('policy_state', state);
  trace.passed('policy_state', state.detail);

  // docs/reference.md#subject-tokens rules 1-2, docs/reference.md#conditions: signature and expiry come before any claim is compared.
  const verified = await verifySubjectToken(deps, input.subjectToken, token.header, state.issuer);
  if (verified instanceof Refusal) return trace.refused('signature', verified);
  const payload = verified.claims;
  // eslint-disable-next-line require-atomic-updates -- the trace is this exchange's own: nothing else writes it.
  trace.outcome.claims = verifiedClaims(payload);
  trace.passed('signature', verified.detail);

  const iss = checkIssuer(payload.iss, state.issuer);
  if (iss) return trace.refused('iss', iss);
  trace.passed('iss', `iss equals the issuer URL ${JSON.stringify(state.issuer.issuerUrl)}.`);

  const audiences = stringList(payload.aud, true);
  if (!audiences) return trace.refused('aud', new Refusal('aud_mismatch', 'The token has no aud, or aud is not a string or a list of strings.'));
  if (!audiences.includes(state.policy.audience)) {
    return trace.refused(
      'aud',
      new Refusal('aud_mismatch', `No aud value of the token (${quoteList(audiences)}) equals the policy audience ${JSON.stringify(state.policy.audience)} exactly.`),
    );
  }
  trace.passed('aud', `One aud value equals the policy audience ${JSON.stringify(state.policy.audience)}.`);

  const sub = payload.sub;
  if (typeof sub !== 'string' || sub === '') {
    return trace.refused('sub', new Refusal('sub_mismatch', 'The token has no sub, or sub is not a non-empty string.'));
  }
  if (state.policy.subject !== null && sub !== state.policy.subject) {
    return trace.refused(
      'sub',
      new Refusal('sub_mismatch', `The token sub ${JSON.stringify(sub)} does not equal the policy subject ${JSON.stringify(state.policy.subject)} (exact, case-sensitive).`),
    );
  }
  trace.passed('sub', state.policy.subject === null ? `The policy sets no exact subject; the token sub is ${JSON.stringify(sub)}.` : `sub equals the policy subject ${JSON.stringify(sub)}.`);

  const scopesCheck = checkScopesClaim(payload.scopes, state.policy.claimChecks.scopes);
  if (scopesCheck instanceof Refusal) return trace.refused('claim_check:scopes', scopesCheck);
  trace.passed('claim_check:scopes', scopesCheck);

  const tokenTypeCheck = checkTokenTypeClaim(payload.token_type, state.policy.claimChecks.tokenType);
  if (tokenTypeCheck instanceof Refusal) return trace.refused('claim_check:token_type', tokenTypeCheck);
  trace.passed('claim_check:token_type', tokenTypeCheck);

  const condition = runCondition(deps, state.policy.condition, { sub, audiences, scopes: payload.scopes, tokenType: payload.token_type });
  if (condition instanceof Refusal) return trace.refused('condition', condition);
  trace.passed('condition', condition);

  return trace.accepted();
}

/** Limits (docs/reference.md#limits) on the unverified payload. */
function checkSizes(payload: Record<string, unknown>): Refusal | null {
  const tooLong = (value: unknown): value is string => typeof value === 'string' && charCount(value) > MAX_CLAIM_CHARS;
  if (tooLong(payload.sub)) return new Refusal('claim_too_large', `sub has ${charCount(payload.sub)} characters; at most ${MAX_CLAIM_CHARS} are accepted.`);
  const audiences = Array.isArray(payload.aud) ? payload.aud : [payload.aud];
  const longAudience = audiences.findIndex(tooLong);
  if (longAudience >= 0) {
    return new Refusal('claim_too_large', `aud value ${longAudience + 1} has ${charCount(audiences[longAudience] as string)} characters; at most ${MAX_CLAIM_CHARS} are accepted.`);
  }
  if (Array.isArray(payload.scopes)) {
    if (payload.scopes.length > MAX_SCOPES) {
      return new Refusal('claim_too_large', `scopes has ${payload.scopes.length} entries; at most ${MAX_SCOPES} are accepted.`);
    }
    const longScope = payload.scopes.findIndex(tooLong);
    if (longScope >= 0) {
      return new Refusal('claim_too_large', `scopes entry ${longScope + 1} has ${charCount(payload.scopes[longScope] as string)} characters; at most ${MAX_CLAIM_CHARS} are accepted.`);
    }
  } else if (tooLong(payload.scopes)) {
    return new Refusal('claim_too_large', `scopes has ${charCount(payload.scopes)} characters; at most ${MAX_CLAIM_CHARS} are accepted.`);
  }
  return null;
}

interface PolicyState {
  policy: FederationPolicy;
  issuer: FederationIssuer;
  detail: string;
}

/**
 * docs/reference.md#lifecycle: a paused or deleted policy, a deleted issuer, a lost entitlement or an unusable key
 * stop new exchanges. The issuer, the organization and the key are read at once, one round
 * trip, and judged in that order.
 */
async function checkPolicyState(deps: ExchangeDependencies, policyId: string, policy: FederationPolicy | undefined, trace: Trace): Promise<PolicyState | Refusal> {
  if (!plausiblePolicyId(policyId)) return new Refusal('policy_not_found', 'The federation_policy_id is not a policy identifier.');
  if (!policy) return new Refusal('policy_not_found', `No policy has the id ${JSON.stringify(policyId)}; it may have been deleted.`);
  trace.outcome.policy = policy;
  if (!policy.enabled) return new Refusal('policy_paused', `The policy "${policy.name}" is paused.`);
  const [issuer, organization, key] = await Promise.all([
    deps.federation.getIssuer(policy.organizationId, policy.issuerId),
    deps.accounts.getOrganization(policy.organizationId),
    deps.accounts.getApiKey(policy.apiKeyHash),
  ]);
  if (!issuer) return new Refusal('issuer_deleted', `The issuer ${policy.issuerId} of the policy has been deleted.`);
  trace.outcome.issuer = issuer;
  if (!organization) return new Refusal('no_entitlement', `The organization ${policy.organizationId} no longer exists.`);
  trace.outcome.organization = organization;
  if (!hasFederationEntitlement(organization.plan)) {
    return new Refusal('no_entitlement', `The organization's plan (${organization.plan}) does not include workload identity federation.`);
  }
  if (!key || key.organizationId !== policy.organizationId) {
    return new Refusal('key_deleted', 'The API key the policy acts as has been deleted.');
  }
  trace.outcome.key = key;
  const keyProblem = actingKeyProblem(key, policy, deps.clock.now());
  if (keyProblem) return keyProblem;
  return {
    policy,
    issuer,
    detail: `The policy "${policy.name}" is enabled; its issuer "${issuer.name}" exists; the organization's plan (${organization.plan}) includes federation; it acts as the ${key.kind} key ${key.label}.`,
  };
}

function actingKeyProblem(key: ApiKeyRecord, policy: FederationPolicy, now: Date): Refusal | null {
  // docs/reference.md#federation-policies: personal keys cannot be targeted, and the scope follows the key's kind.
  const scope = key.kind === 'workspace' ? 'inference' : key.kind === 'management' ? 'management' : null;
  if (scope === null) return new Refusal('key_disabled', `The acting key ${key.label} is a personal key, which a policy cannot act as.`);
  if (scope !== policy.scope) {
    return new Refusal('key_disabled', `The policy grants ${policy.scope} but the acting key ${key.label} is a ${key.kind} key.`);
  }
  if (key.disabled) return new Refusal('key_disabled', `The API key ${key.label} the policy acts as is disabled.`);
  if (key.expiresAt !== null && Date.parse(key.expiresAt) <= now.getTime()) {
    return new Refusal('key_expired', `The API key ${key.label} the policy acts as expired at ${key.expiresAt}.`);
  }
  return null;
}

function checkIssuer(iss: unknown, issuer: FederationIssuer): Refusal | null {
  if (typeof iss !== 'string') return new Refusal('iss_mismatch', 'The token has no iss, or iss is not a string.');
  if (iss === issuer.issuerUrl) return null;
  return new Refusal(
    'iss_mismatch',
    `The token iss ${JSON.stringify(iss.slice(0, MAX_CLAIM_CHARS))} does not equal the issuer URL ${JSON.stringify(issuer.issuerUrl)} character for character.`,
  );
}

/** The scopes check (docs/reference.md#federation-policies rule 3): an array of strings containing the value; rules 4-5. */
function checkScopesClaim(scopes: unknown, required: string | null): string | Refusal {
  if (required === null) return 'No scopes check is configured.';
  if (scopes === undefined) return new Refusal('claim_check_failed', `The token has no scopes claim; the policy requires one containing ${JSON.stringify(required)}.`);
  const list = stringList(scopes, false);
  if (!list) {
    const shape = typeof scopes === 'string' ? 'a string (a space-separated scope is never consulted)' : `of type ${describeType(scopes)}`;
    return new Refusal('claim_check_failed', `The token scopes claim is ${shape}, not a list of strings.`);
  }
  if (!list.includes(required)) {
    return new Refusal('claim_check_failed', `The token scopes (${quoteList(list)}) do not contain ${JSON.stringify(required)} (case-sensitive).`);
  }
  return `The token scopes contain ${JSON.stringify(required)}.`;
}

/** The token type check (docs/reference.md#federation-policies rule 3): the `token_type` claim, never the header `typ`. */
function checkTokenTypeClaim(tokenType: unknown, required: string | null): string | Refusal {
  if (required === null) return 'No token type check is configured.';
  if (tokenType === undefined) return new Refusal('claim_check_failed', `The token has no token_type claim; the policy requires ${JSON.stringify(required)}.`);
  if (typeof tokenType !== 'string') {
    return new Refusal('claim_check_failed', `The token token_type claim is of type ${describeType(tokenType)}, not a string.`);
  }
  if (tokenType !== required) {
    return new Refusal(
      'claim_check_failed',
      `The token token_type ${JSON.stringify(tokenType.slice(0, MAX_CLAIM_CHARS))} does not equal ${JSON.stringify(required)} (case-sensitive).`,
    );
  }
  return `The token token_type equals ${JSON.stringify(required)}.`;
}

/** docs/reference.md#conditions: the condition sees exactly four variables; rule 4 refuses false, errors and wrongly typed claims. */
function runCondition(
  deps: ExchangeDependencies,
  source: string | null,
  claims: { sub: string; audiences: string[]; scopes: unknown; tokenType: unknown },
): string | Refusal {
  if (source === null) return 'The policy has no condition.';
  const scopes = claims.scopes === undefined ? [] : stringList(claims.scopes, false);
  if (!scopes) {
    return new Refusal('condition_error', `The token scopes claim is of type ${describeType(claims.scopes)}; the condition needs a list of strings.`);
  }
  const tokenType = claims.tokenType === undefined ? '' : claims.tokenType;
  if (typeof tokenType !== 'string') {
    return new Refusal('condition_error', `The token token_type claim is of type ${describeType(tokenType)}; the condition needs a string.`);
  }
  const variables: ConditionVariables = { subject: claims.sub, audience: claims.audiences, scopes, token_type: tokenType };
  let result: unknown;
  try {
    result = deps.evaluateCondition(source, variables);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return new Refusal('condition_error', `The condition failed to evaluate: ${message.slice(0, 300)}`);
  }
  if (result === true) return `The condition is true for ${describeVariables(variables)}.`;
  if (result === false) return new Refusal('condition_false', `The condition is false for ${describeVariables(variables)}.`);
  return new Refusal('condition_error', `The condition yielded ${describeType(result)}, not a boolean.`);
}

function verifiedClaims(payload: Record<string, unknown>): SubjectClaims {
  return {
    sub: typeof payload.sub === 'string' ? payload.sub : '',
    aud: stringList(payload.aud, true) ?? [],
    // Checked as NumericDates already (lambdas/credentials/token-time-rules.ts); counted in whole seconds from here on.
    exp: wholeSeconds(payload.exp as number),
    iat: isNumericDate(payload.iat) ? wholeSeconds(payload.iat) : null,
    jti: typeof payload.jti === 'string' ? payload.jti : null,
    scopes: payload.scopes,
    token_type: payload.token_type,
  };
}

function unverifiedSubject(payload: Record<string, unknown>): string | null {
  return typeof payload.sub === 'string' ? Array.from(payload.sub).slice(0, MAX_CLAIM_CHARS).join('') : null;
}

function plausiblePolicyId(policyId: string): boolean {
  return typeof policyId === 'string' && policyId.length > 0 && policyId.length <= MAX_POLICY_ID_CHARS;
}

/** A list of strings; with `singleString`, one string is a one-element list (the `aud` rule, RFC 7519 §4.1.3). */
function stringList(value: unknown, singleString: boolean): string[] | null {
  if (singleString && typeof value === 'string') return [value];
  if (Array.isArray(value) && value.every((item) => typeof item === 'string')) return value as string[];
  return null;
}

/** Unicode characters, not UTF-16 code units. */
function charCount(value: string): number {
  let count = 0;
  for (const _ of value) count++;
  return count;
}

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'list (not all strings)';
  return typeof value;
}

function quoteList(values: readonly string[]): string {
  return values.map((value) => JSON.stringify(value.slice(0, 200))).join(', ');
}

function describeVariables(variables: ConditionVariables): string {
  return `subject ${JSON.stringify(variables.subject)}, audience [${quoteList(variables.audience)}], scopes [${quoteList(variables.scopes)}], token_type ${JSON.stringify(variables.token_type)}`;
}
