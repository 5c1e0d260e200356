import type { FunctionId } from '../lambdas/routes';

/**
 * Memory of the functions, in MB; Lambda gives CPU in proportion (one vCPU at 1,769 MB). The
 * stack sets it, and the bench's cost model (local/cost-model.ts) prices a request's duration
 * at it.
 */
export const DEFAULT_FUNCTION_MEMORY_MB = 256;

/** The functions that need more than {@link DEFAULT_FUNCTION_MEMORY_MB}. */
export const FUNCTION_MEMORY_MB: Readonly<Partial<Record<FunctionId, number>>> = {
  // Holds the whole catalog in memory and filters it per request.
  catalog: 512,
};

/** The memory of a function, in MB: its entry in {@link FUNCTION_MEMORY_MB}, else the default. */
export const memoryOf = (fn: FunctionId): number => FUNCTION_MEMORY_MB[fn] ?? DEFAULT_FUNCTION_MEMORY_MB;
