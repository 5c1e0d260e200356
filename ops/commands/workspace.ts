import type { Workspace } from '../../lambdas/accounts/types';
import type { CommandSpec } from '../command';
import { fields, listOrDash, oldestFirst, orDash, respond, table } from '../format';
import { workspaceView } from '../views';

const ORG_ARG = { name: 'org', help: 'organization id' };

export function workspaceFields(workspace: Workspace): string[] {
  return fields([
    ['ID', workspace.id],
    ['Name', workspace.name],
    ['Slug', workspace.slug],
    ['Description', orDash(workspace.description)],
    ['Guardrails', listOrDash(workspace.guardrailIds)],
    ['Created', workspace.createdAt],
    ['Updated', orDash(workspace.updatedAt)],
  ]);
}

export const workspaceCommands: CommandSpec[] = [
  {
    group: 'workspace',
    name: 'create',
    summary: 'Create a workspace in an organization.',
    description: ['Its slug is derived from the name and must be unique in the organization.'],
    args: [ORG_ARG],
    options: {
      name: { type: 'string', required: true, help: 'display name' },
      description: { type: 'string', value: 'text', help: 'free text' },
    },
    flagsByParameter: { name: '--name' },
    parse(input) {
      const organizationId = input.arg('org');
      const name = input.requiredString('name');
      const description = input.string('description') ?? null;
      return async (ctx) => {
        const workspace = await ctx.accounts.createWorkspace(organizationId, { name, description });
        respond(ctx, input, { data: workspaceView(workspace) }, () => [
          `Created workspace ${workspace.id} in organization ${organizationId}.`,
          ...workspaceFields(workspace),
        ]);
      };
    },
  },
  {
    group: 'workspace',
    name: 'list',
    summary: "List an organization's workspaces, oldest first.",
    args: [ORG_ARG],
    parse(input) {
      const organizationId = input.arg('org');
      return async (ctx) => {
        await ctx.accounts.getOrganization(organizationId);
        const workspaces = (await ctx.accounts.listWorkspaces(organizationId)).sort(oldestFirst);
        respond(ctx, input, { data: workspaces.map(workspaceView) }, () =>
          workspaces.length === 0
            ? ['No workspaces.']
            : table(
                ['ID', 'SLUG', 'NAME', 'GUARDRAILS', 'CREATED'],
                workspaces.map((w) => [w.id, w.slug, w.name, listOrDash(w.guardrailIds), w.createdAt]),
              ),
        );
      };
    },
  },
];
