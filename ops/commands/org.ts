import { PLANS, type Organization, type Plan } from '../../lambdas/accounts/types';
import type { CommandSpec } from '../command';
import { UsageError } from '../errors';
import { fields, listOrDash, oldestFirst, orDash, respond, table } from '../format';
import { organizationView, workspaceView } from '../views';

const ALLOW_DENY = ['allow', 'deny'] as const;
const ON_OFF = ['on', 'off'] as const;
const ORG_ARG = { name: 'org', help: 'organization id' };

/** An organization as `org show` prints it, in the vocabulary of the `org set-*` flags. */
export function organizationFields(organization: Organization): string[] {
  const { providerPreferences: providers, privacy } = organization;
  return fields([
    ['ID', organization.id],
    ['Name', organization.name],
    ['Plan', organization.plan],
    ['Allowed providers', providers.allowedProviders === null ? 'all' : listOrDash(providers.allowedProviders)],
    ['Ignored providers', listOrDash(providers.ignoredProviders)],
    ['Training', privacy.allowTrainingProviders ? 'allow' : 'deny'],
    ['Retention', privacy.allowRetainingProviders ? 'allow' : 'deny'],
    ['ZDR only', privacy.zeroDataRetentionOnly ? 'on' : 'off'],
    ['Created', organization.createdAt],
    ['Updated', orDash(organization.updatedAt)],
  ]);
}

const updated = (organization: Organization) => [`Updated organization ${organization.id}.`, ...organizationFields(organization)];

/** The `org` commands: organizations, their plan, provider preferences and privacy settings. */
export const orgCommands: CommandSpec[] = [
  {
    group: 'org',
    name: 'create',
    summary: 'Create an organization, with its Default workspace.',
    options: {
      name: { type: 'string', required: true, help: 'display name' },
      plan: { type: 'string', value: PLANS.join('|'), required: true, help: 'billing plan' },
    },
    parse(input) {
      const name = input.requiredString('name');
      const plan = input.requiredChoice('plan', PLANS);
      return async (ctx) => {
        const { organization, workspace } = await ctx.accounts.createOrganization({ name, plan });
        respond(ctx, input, { data: organizationView(organization), default_workspace: workspaceView(workspace) }, () => [
          `Created organization ${organization.id} with workspace ${workspace.id} (${workspace.slug}).`,
          ...organizationFields(organization),
        ]);
      };
    },
  },
  {
    group: 'org',
    name: 'list',
    summary: 'List organizations, oldest first.',
    parse(input) {
      return async (ctx) => {
        const organizations = (await ctx.accounts.listOrganizations()).sort(oldestFirst);
        respond(ctx, input, { data: organizations.map(organizationView) }, () =>
          organizations.length === 0
            ? ['No organizations.']
            : table(['ID', 'NAME', 'PLAN', 'CREATED'], organizations.map((o) => [o.id, o.name, o.plan, o.createdAt])),
        );
      };
    },
  },
  {
    group: 'org',
    name: 'show',
    summary: 'Show an organization: plan, provider preferences, privacy.',
    args: [ORG_ARG],
    parse(input) {
      const organizationId = input.arg('org');
      return async (ctx) => {
        const organization = await ctx.accounts.getOrganization(organizationId);
        respond(ctx, input, { data: organizationView(organization) }, () => organizationFields(organization));
      };
    },
  },
  {
    group: 'org',
    name: 'set-plan',
    summary: "Change an organization's plan.",
    args: [ORG_ARG, { name: 'plan', help: PLANS.join(', ') }],
    parse(input) {
      const organizationId = input.arg('org');
      const plan = input.arg('plan');
      if (!PLANS.includes(plan as Plan)) throw new UsageError(`<plan> must be one of ${PLANS.join(', ')} (got "${plan}")`);
      return async (ctx) => {
        const organization = await ctx.accounts.setPlan(organizationId, plan as Plan);
        respond(ctx, input, { data: organizationView(organization) }, () => updated(organization));
      };
    },
  },
  {
    group: 'org',
    name: 'set-providers',
    summary: 'Set which providers may serve an organization.',
    description: [
      'Providers are endpoint tags, e.g. anthropic or amazon-bedrock. Options not given keep their current value; ' +
        '--allow and --allow-all exclude each other.',
    ],
    args: [ORG_ARG],
    options: {
      allow: { type: 'string', value: 'providers', list: true, help: 'use only these providers' },
      'allow-all': { type: 'boolean', help: 'lift the allowlist: every provider that is not ignored' },
      ignore: { type: 'string', value: 'providers', list: true, help: 'never use these providers; --ignore "" clears the list' },
    },
    parse(input) {
      const organizationId = input.arg('org');
      const allowAll = input.flag('allow-all');
      if (input.has('allow') && allowAll) throw new UsageError('--allow and --allow-all exclude each other');
      const allow = input.nonEmptyList('allow', 'provider (--allow-all lifts the allowlist)');
      const ignore = input.list('ignore');
      if (allow === undefined && !allowAll && ignore === undefined) {
        throw new UsageError('nothing to change: give --allow, --allow-all or --ignore');
      }
      return async (ctx) => {
        const current = (await ctx.accounts.getOrganization(organizationId)).providerPreferences;
        const organization = await ctx.accounts.setProviderPreferences(organizationId, {
          allowedProviders: allowAll ? null : (allow ?? current.allowedProviders),
          ignoredProviders: ignore ?? current.ignoredProviders,
        });
        respond(ctx, input, { data: organizationView(organization) }, () => updated(organization));
      };
    },
  },
  {
    group: 'org',
    name: 'set-privacy',
    summary: "Set which endpoints may see an organization's prompts.",
    description: ['Options not given keep their current value.'],
    args: [ORG_ARG],
    options: {
      training: { type: 'string', value: 'allow|deny', help: 'endpoints whose provider may train on prompts' },
      retention: { type: 'string', value: 'allow|deny', help: 'endpoints whose provider retains prompts' },
      'zdr-only': { type: 'string', value: 'on|off', help: 'only zero-data-retention endpoints' },
    },
    parse(input) {
      const organizationId = input.arg('org');
      const training = input.choice('training', ALLOW_DENY);
      const retention = input.choice('retention', ALLOW_DENY);
      const zdrOnly = input.choice('zdr-only', ON_OFF);
      if (training === undefined && retention === undefined && zdrOnly === undefined) {
        throw new UsageError('nothing to change: give --training, --retention or --zdr-only');
      }
      return async (ctx) => {
        const current = (await ctx.accounts.getOrganization(organizationId)).privacy;
        const organization = await ctx.accounts.setPrivacy(organizationId, {
          allowTrainingProviders: training === undefined ? current.allowTrainingProviders : training === 'allow',
          allowRetainingProviders: retention === undefined ? current.allowRetainingProviders : retention === 'allow',
          zeroDataRetentionOnly: zdrOnly === undefined ? current.zeroDataRetentionOnly : zdrOnly === 'on',
        });
        respond(ctx, input, { data: organizationView(organization) }, () => updated(organization));
      };
    },
  },
];
