import { NO_USAGE } from '../../usage/usage';
import type { CURRENT_KEY_ROUTES } from '../routes/current-key';
import { orgOf, type Operations } from '../operation';
import { currentKeyView } from '../views';

/** `GET /key`: the calling key, with its usage. */
export const CURRENT_KEY_OPERATIONS: Operations<typeof CURRENT_KEY_ROUTES> = {
  getCurrentKey: async ({ principal, deps }) => {
    const usage = await deps.usage.keyUsage(orgOf(principal), [principal.key.hash], deps.clock.now());
    return { data: currentKeyView(principal, usage.get(principal.key.hash) ?? NO_USAGE) };
  },
};
