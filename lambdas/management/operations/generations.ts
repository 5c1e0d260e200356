import { NotFoundError } from '../../errors';
import { mayReadGeneration, publicGeneration } from '../../usage/generations';
import type { GENERATION_ROUTES } from '../routes/generations';
import type { Operations } from '../operation';

/** `GET /generation`: one completion's stats, for the key that made it. */
export const GENERATION_OPERATIONS: Operations<typeof GENERATION_ROUTES> = {
  getGeneration: async ({ principal, query, deps }) => {
    const record = await deps.generations.get(query.id);
    // Another organization's generation, or another key's, is as absent as one that never was.
    if (!record || !mayReadGeneration(principal, record)) throw new NotFoundError(`No generation ${query.id} for this key`);
    return { data: publicGeneration(record) };
  },
};
