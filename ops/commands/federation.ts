import { readFileSync } from 'node:fs';
import type { FederationService } from '../../lambdas/federation/federation-service';
import type { FederationIssuer, FederationPolicy } from '../../lambdas/federation/types';
import type { CommandInput, CommandSpec, OpsContext, OptionSpec } from '../command';
import { UsageError } from '../errors';
import { fields, orDash, respond, table } from '../format';
import { issuerView, policyView } from '../views';

/**
 * Workload identity federation: issuers and policies, with the management API's validation
 * (the commands hand the service the same fields a request body carries).
 */

const ORG_ARG = { name: 'org', help: 'organization id' };
const ISSUER_ARG = { name: 'issuer', help: 'issuer id' };
const POLICY_ARG = { name: 'policy', help: 'policy id (what workloads send as federation_policy_id)' };

const ISSUER_FLAGS = { name: '--name', issuer_url: '--issuer-url', jwks_url: '--jwks-url', jwks: '--jwks-file', check_jti: '--check-jti' };
const POLICY_FLAGS = {
  name: '--name',
  issuer_id: '--issuer',
  subject: '--subject',
  audience: '--audience',
  condition: '--condition',
  api_key_hash: '--key',
  'claim_checks.scopes': '--scopes-check',
  'claim_checks.token_type': '--token-type-check',
  require_dpop: '--require-dpop',
};

/** The fields `policy create` requires and `policy update` changes when given, by flag. */
function policyOptions(required: boolean): Record<string, OptionSpec> {
  return {
    name: { type: 'string', required, help: 'display name' },
    issuer: { type: 'string', value: 'id', required, help: 'the issuer whose tokens are accepted' },
    audience: { type: 'string', value: 'aud', required, help: 'one of the token’s aud values, exactly' },
    key: { type: 'string', value: 'hash', required, help: 'hash of the workspace or management key to act as' },
    subject: { type: 'string', value: 'sub', help: 'the token’s sub, exactly' },
    condition: { type: 'string', value: 'cel', help: 'a CEL expression that must be true' },
    'scopes-check': { type: 'string', value: 'scope', help: 'the token’s scopes array must contain this value' },
    'token-type-check': { type: 'string', value: 'type', help: 'the token’s token_type claim must equal this value' },
    'require-dpop': { type: 'boolean', help: 'issue DPoP-bound tokens only: refuse an exchange without a DPoP proof (RFC 9449)' },
  };
}

/**
 * The claim checks given on the command line; an absent one is left out (an update keeps it),
 * and one given as `--clear-<check>` is removed (null).
 */
function claimChecks(input: CommandInput): Record<string, unknown> | undefined {
  const scopes = clearable(input, 'scopes-check');
  const tokenType = clearable(input, 'token-type-check');
  return scopes !== undefined || tokenType !== undefined ? withoutUndefined({ scopes, token_type: tokenType }) : undefined;
}

/** The fields `policy update` can remove, each with its `--clear-<field>` flag. */
const CLEARABLE = ['subject', 'condition', 'scopes-check', 'token-type-check'] as const;

/** A field's new value: the option's, null with `--clear-<option>` (an update removes it), or absent. */
function clearable(input: CommandInput, option: (typeof CLEARABLE)[number]): string | null | undefined {
  const value = input.string(option);
  // `policy create` declares no --clear- flag: there it is never set.
  if (!input.flag(`clear-${option}`)) return value;
  if (value !== undefined) throw new UsageError(`--${option} and --clear-${option} exclude each other`);
  return null;
}

function federation(ctx: OpsContext): FederationService {
  if (!ctx.federation) {
    throw new UsageError('issuer and policy commands on a deployed stack need POLICIES_TABLE (the stack output PoliciesTableName)');
  }
  return ctx.federation;
}

function issuerFields(issuer: FederationIssuer): string[] {
  return fields([
    ['ID', issuer.id],
    ['Name', issuer.name],
    ['Issuer URL', issuer.issuerUrl],
    ['Keys', keySource(issuer)],
    ['Check jti', issuer.checkJti ? 'on' : 'off'],
    ['Created', issuer.createdAt],
    ['Updated', orDash(issuer.updatedAt)],
  ]);
}

function keySource(issuer: FederationIssuer): string {
  if (issuer.jwks) return `inline (${issuer.jwks.keys.map((key) => key.kid).join(', ')})`;
  return issuer.jwksUrl ?? 'discovery';
}

function policyFields(policy: FederationPolicy): string[] {
  return fields([
    ['ID', policy.id],
    ['Name', policy.name],
    ['Status', status(policy)],
    ['Issuer', policy.issuerId],
    ['Subject', orDash(policy.subject)],
    ['Audience', policy.audience],
    ['Condition', orDash(policy.condition)],
    ['Acts as key', policy.apiKeyHash],
    ['Scope', policy.scope],
    ['Scopes check', orDash(policy.claimChecks.scopes)],
    ['Token type check', orDash(policy.claimChecks.tokenType)],
    ['DPoP', dpop(policy)],
    ['Created', policy.createdAt],
    ['Updated', orDash(policy.updatedAt)],
  ]);
}

const status = (policy: FederationPolicy) => (policy.enabled ? 'enabled' : 'paused');
const dpop = (policy: FederationPolicy) => (policy.requireDpop ? 'required' : 'optional');

/** `--jwks-file keys.json`: an inline JWK Set, read before anything connects. */
function jwksFromFile(input: CommandInput): unknown {
  const path = input.string('jwks-file');
  if (path === undefined) return undefined;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new UsageError(`--jwks-file: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new UsageError(`--jwks-file: ${path} is not JSON`);
  }
}

function show<T>(group: 'issuer' | 'policy', load: (service: FederationService, org: string, id: string) => Promise<T>, view: (value: T) => unknown, text: (value: T) => string[]): CommandSpec {
  return {
    group,
    name: 'show',
    summary: `Show one ${group}.`,
    args: [ORG_ARG, group === 'issuer' ? ISSUER_ARG : POLICY_ARG],
    parse(input) {
      const organizationId = input.arg('org');
      const id = input.arg(group);
      return async (ctx) => {
        const value = await load(federation(ctx), organizationId, id);
        respond(ctx, input, { data: view(value) }, () => text(value));
      };
    },
  };
}

function policySwitch(enabled: boolean): CommandSpec {
  return {
    group: 'policy',
    name: enabled ? 'enable' : 'pause',
    summary: enabled
      ? 'Enable a paused policy: new exchanges are evaluated again.'
      : 'Pause a policy: new exchanges naming it fail; tokens already issued stay valid until they expire.',
    args: [ORG_ARG, POLICY_ARG],
    parse(input) {
      const organizationId = input.arg('org');
      const id = input.arg('policy');
      return async (ctx) => {
        const policy = await federation(ctx).setPolicyEnabled(organizationId, id, enabled);
        respond(ctx, input, { data: policyView(policy) }, () => [`${enabled ? 'Enabled' : 'Paused'} policy ${policy.id} (${policy.name}).`]);
      };
    },
  };
}

/** `issuer create`, `issuer list` and `issuer delete`: the identity providers an organization trusts. */
export const issuerCommands: CommandSpec[] = [
  {
    group: 'issuer',
    name: 'create',
    summary: 'Trust an identity provider whose tokens workloads exchange.',
    description: [
      'The issuer URL must equal the iss claim of its tokens character for character (https:// only). ' +
        'Keys come from --jwks-url, from inline public keys in --jwks-file (a JWK Set: EC P-256 or RSA, each with a kid), ' +
        "or, with neither, from jwks_uri in the issuer's /.well-known/openid-configuration. Nothing is fetched when saving.",
      'Requires the Business or Enterprise plan.',
    ],
    args: [ORG_ARG],
    options: {
      name: { type: 'string', required: true, help: 'display name' },
      'issuer-url': { type: 'string', value: 'url', required: true, help: 'the iss of its tokens' },
      'jwks-url': { type: 'string', value: 'url', help: 'where it publishes its keys' },
      'jwks-file': { type: 'string', value: 'path', help: 'a JSON file holding its public keys (a JWK Set)' },
      'check-jti': { type: 'boolean', help: 'refuse a token whose jti was seen before (and one without jti)' },
    },
    flagsByParameter: ISSUER_FLAGS,
    parse(input) {
      const organizationId = input.arg('org');
      const body = {
        name: input.requiredString('name'),
        issuer_url: input.requiredString('issuer-url'),
        jwks_url: input.string('jwks-url'),
        jwks: jwksFromFile(input),
        check_jti: input.flag('check-jti'),
      };
      return async (ctx) => {
        const issuer = await federation(ctx).createIssuer(organizationId, withoutUndefined(body));
        respond(ctx, input, { data: issuerView(issuer) }, () => [`Created issuer ${issuer.id} in organization ${organizationId}.`, ...issuerFields(issuer)]);
      };
    },
  },
  {
    group: 'issuer',
    name: 'list',
    summary: "List an organization's issuers, oldest first.",
    args: [ORG_ARG],
    parse(input) {
      const organizationId = input.arg('org');
      return async (ctx) => {
        await ctx.accounts.getOrganization(organizationId);
        const issuers = await federation(ctx).listIssuers(organizationId);
        respond(ctx, input, { data: issuers.map(issuerView), total_count: issuers.length }, () =>
          issuers.length === 0
            ? ['No issuers.']
            : table(
                ['ID', 'NAME', 'ISSUER URL', 'KEYS', 'JTI'],
                issuers.map((i) => [i.id, i.name, i.issuerUrl, keySource(i), i.checkJti ? 'on' : 'off']),
              ),
        );
      };
    },
  },
  show('issuer', (service, org, id) => service.getIssuer(org, id), issuerView, issuerFields),
  {
    group: 'issuer',
    name: 'delete',
    summary: 'Delete an issuer and its policies: new exchanges fail; tokens already issued stay valid until they expire.',
    args: [ORG_ARG, ISSUER_ARG],
    parse(input) {
      const organizationId = input.arg('org');
      const id = input.arg('issuer');
      return async (ctx) => {
        await federation(ctx).deleteIssuer(organizationId, id);
        respond(ctx, input, { deleted: true }, () => [`Deleted issuer ${id} and its policies.`]);
      };
    },
  },
];

/** The `policy` commands: which tokens of an issuer act as which key, and whether a policy is paused. */
export const policyCommands: CommandSpec[] = [
  {
    group: 'policy',
    name: 'create',
    summary: "Let an issuer's tokens act as an API key.",
    description: [
      'A token is accepted when its aud contains --audience, its sub equals --subject (when given), the claim checks hold ' +
        'and the CEL --condition (over subject, audience, scopes, token_type) is true. Give --subject or --condition, or both.',
      'The policy acts as a workspace key (scope inference) or a management key (scope management), named by its hash as key list shows it. ' +
        'Requires the Business or Enterprise plan.',
      'With --require-dpop an exchange must carry a DPoP proof (RFC 9449) and gets a token bound to the proof’s key; without it, ' +
        'an exchange with a proof gets a bound token and one without a Bearer token.',
    ],
    args: [ORG_ARG],
    options: {
      ...policyOptions(true),
      paused: { type: 'boolean', help: 'create the policy paused' },
    },
    flagsByParameter: POLICY_FLAGS,
    parse(input) {
      const organizationId = input.arg('org');
      const body = withoutUndefined({
        name: input.requiredString('name'),
        issuer_id: input.requiredString('issuer'),
        audience: input.requiredString('audience'),
        api_key_hash: input.requiredString('key'),
        subject: input.string('subject'),
        condition: input.string('condition'),
        enabled: !input.flag('paused'),
        claim_checks: claimChecks(input),
        require_dpop: input.flag('require-dpop'),
      });
      return async (ctx) => {
        const policy = await federation(ctx).createPolicy(organizationId, body);
        respond(ctx, input, { data: policyView(policy) }, () => [`Created policy ${policy.id} in organization ${organizationId}.`, ...policyFields(policy)]);
      };
    },
  },
  {
    group: 'policy',
    name: 'list',
    summary: "List an organization's policies, oldest first.",
    args: [ORG_ARG],
    options: { issuer: { type: 'string', value: 'id', help: "only this issuer's policies" } },
    flagsByParameter: { issuer_id: '--issuer' },
    parse(input) {
      const organizationId = input.arg('org');
      const issuerId = input.string('issuer');
      return async (ctx) => {
        await ctx.accounts.getOrganization(organizationId);
        const policies = await federation(ctx).listPolicies(organizationId, issuerId);
        respond(ctx, input, { data: policies.map(policyView), total_count: policies.length }, () =>
          policies.length === 0
            ? ['No policies.']
            : table(
                ['ID', 'NAME', 'STATUS', 'ISSUER', 'SUBJECT', 'AUDIENCE', 'SCOPE', 'DPOP'],
                policies.map((p) => [p.id, p.name, status(p), p.issuerId, orDash(p.subject), p.audience, p.scope, dpop(p)]),
              ),
        );
      };
    },
  },
  show('policy', (service, org, id) => service.getPolicy(org, id), policyView, policyFields),
  {
    group: 'policy',
    name: 'update',
    summary: 'Change some fields of a policy; the others keep their value.',
    description: [
      'Takes the fields of policy create, each optional; --scopes-check and --token-type-check each change only their own check. ' +
        'The policy is checked again as a whole, as policy create checks it. policy enable and policy pause switch it on and off.',
      '--require-dpop makes the policy issue DPoP-bound tokens only; --no-require-dpop lets an exchange without a proof get a Bearer token again ' +
        '(one with a valid proof still gets a bound token). They exclude each other.',
      '--clear-subject, --clear-condition, --clear-scopes-check and --clear-token-type-check remove that field; the policy still needs a subject or a condition.',
    ],
    args: [ORG_ARG, POLICY_ARG],
    options: {
      ...policyOptions(false),
      'no-require-dpop': { type: 'boolean', help: 'issue Bearer tokens to exchanges without a DPoP proof (the default)' },
      ...Object.fromEntries(CLEARABLE.map((option) => [`clear-${option}`, { type: 'boolean', help: `remove the policy's ${option.replace('-check', ' check')}` }])),
    },
    flagsByParameter: POLICY_FLAGS,
    parse(input) {
      const organizationId = input.arg('org');
      const id = input.arg('policy');
      if (input.flag('require-dpop') && input.flag('no-require-dpop')) throw new UsageError('--require-dpop and --no-require-dpop exclude each other');
      const body = withoutUndefined({
        name: input.string('name'),
        issuer_id: input.string('issuer'),
        audience: input.string('audience'),
        api_key_hash: input.string('key'),
        subject: clearable(input, 'subject'),
        condition: clearable(input, 'condition'),
        claim_checks: claimChecks(input),
        require_dpop: input.flag('require-dpop') ? true : input.flag('no-require-dpop') ? false : undefined,
      });
      if (Object.keys(body).length === 0) {
        throw new UsageError(
          'nothing to change: give --name, --issuer, --audience, --key, --subject, --condition, --scopes-check, --token-type-check, --require-dpop, --no-require-dpop or a --clear- flag',
        );
      }
      return async (ctx) => {
        const policy = await federation(ctx).updatePolicy(organizationId, id, body);
        respond(ctx, input, { data: policyView(policy) }, () => [`Updated policy ${policy.id} (${policy.name}).`, ...policyFields(policy)]);
      };
    },
  },
  policySwitch(true),
  policySwitch(false),
  {
    group: 'policy',
    name: 'delete',
    summary: 'Delete a policy: new exchanges naming it fail; tokens already issued stay valid until they expire.',
    args: [ORG_ARG, POLICY_ARG],
    parse(input) {
      const organizationId = input.arg('org');
      const id = input.arg('policy');
      return async (ctx) => {
        await federation(ctx).deletePolicy(organizationId, id);
        respond(ctx, input, { deleted: true }, () => [`Deleted policy ${id}.`]);
      };
    },
  },
];

function withoutUndefined(body: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(body).filter(([, value]) => value !== undefined));
}
