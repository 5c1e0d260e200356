import type { CommandSpec } from '../command';
import { UsageError } from '../errors';
import { fields, respond } from '../format';
import { userView } from '../views';

/** `user create`: the users that own personal keys. */
export const userCommands: CommandSpec[] = [
  {
    group: 'user',
    name: 'create',
    summary: 'Create a user in an organization.',
    description: ['Users own personal keys: key create <org> --kind personal --user <id> ...'],
    args: [{ name: 'org', help: 'organization id' }],
    options: {
      email: { type: 'string', required: true, help: 'email address' },
      name: { type: 'string', required: true, help: 'display name' },
    },
    parse(input) {
      const organizationId = input.arg('org');
      const email = input.requiredString('email');
      if (!/^[^\s@]+@[^\s@]+$/.test(email)) throw new UsageError(`--email must be an email address (got "${email}")`);
      const name = input.requiredString('name');
      return async (ctx) => {
        const user = await ctx.accounts.createUser(organizationId, { email, name });
        respond(ctx, input, { data: userView(user) }, () => [
          `Created user ${user.id} in organization ${organizationId}.`,
          ...fields([
            ['ID', user.id],
            ['Email', user.email],
            ['Name', user.name],
            ['Created', user.createdAt],
          ]),
        ]);
      };
    },
  },
];
