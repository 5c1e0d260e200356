import { AsyncLocalStorage } from 'node:async_hooks';
import type { InitializeMiddleware, MiddlewareStack } from '@smithy/types';
import type { Signer } from '../lambdas/signing/signer';

/**
 * What a request costs in AWS: its round trips to AWS services, not its CPU. The local runtime
 * can report every call its functions make through the AWS SDK (and every signature, KMS `Sign`
 * in AWS), each with the request it served, so tests assert how many calls a route makes and
 * in how many sequential stages, and the bench models AWS latency from them.
 */

export interface AwsCall {
  /** The API request the call served (the proxy event's request id); undefined outside one. */
  requestId: string | undefined;
  /** The function that made it. */
  functionName: string;
  /** `DynamoDB`, `KMS`. */
  service: string;
  /** The SDK command (`GetItem`, `BatchGetItem`, `Sign`). */
  command: string;
  /** Tables the call touched, when a table is named. */
  tables: string[];
  /** `performance.now()` when the call started and when its answer (or error) arrived. */
  start: number;
  end: number;
}

export type AwsCallObserver = (call: AwsCall) => void;

/** The request each asynchronous path serves, set by the local server around every invocation. */
export const requestScope = new AsyncLocalStorage<string>();

interface MiddlewareClient {
  middlewareStack: Pick<MiddlewareStack<any, any>, 'add'>;
}

/**
 * Reports every command of `client` to `observe`, measured around the whole call (retries
 * included), as the caller waits for it.
 */
export function observeClientCalls(client: MiddlewareClient, functionName: string, service: string, observe: AwsCallObserver): void {
  const middleware: InitializeMiddleware<any, any> = (next, context) => async (args) => {
    const requestId = requestScope.getStore();
    const start = performance.now();
    try {
      return await next(args);
    } finally {
      const command = (context as { commandName?: string }).commandName?.replace(/Command$/, '') ?? 'unknown';
      observe({ requestId, functionName, service, command, tables: tablesOf(args.input), start, end: performance.now() });
    }
  };
  client.middlewareStack.add(middleware, { step: 'initialize', name: 'modelgateCallObserver' });
}

/** A signer whose every signature is reported as the KMS `Sign` it is in AWS. */
export function observeSigner(signer: Signer, functionName: string, observe: AwsCallObserver): Signer {
  return {
    kid: signer.kid,
    async sign(signingInput) {
      const requestId = requestScope.getStore();
      const start = performance.now();
      try {
        return await signer.sign(signingInput);
      } finally {
        observe({ requestId, functionName, service: 'KMS', command: 'Sign', tables: [], start, end: performance.now() });
      }
    },
  };
}

function tablesOf(input: unknown): string[] {
  const { TableName, RequestItems, TransactItems } = (input ?? {}) as { TableName?: string; RequestItems?: Record<string, unknown>; TransactItems?: unknown[] };
  if (typeof TableName === 'string') return [TableName];
  if (RequestItems) return Object.keys(RequestItems);
  if (TransactItems) return ['(transaction)'];
  return [];
}

/**
 * Each call's stage: 1 plus the deepest stage of the calls that had answered before it
 * started. Calls that overlap in time share a stage.
 */
export function callStages<T extends Pick<AwsCall, 'start' | 'end'>>(calls: readonly T[]): Map<T, number> {
  const sorted = [...calls].sort((a, b) => a.start - b.start);
  const stages = new Map<T, number>();
  for (const call of sorted) {
    let before = 0;
    for (const [other, stage] of stages) if (other.end <= call.start) before = Math.max(before, stage);
    stages.set(call, before + 1);
  }
  return stages;
}

/**
 * The number of sequential stages: the longest chain of calls each of which started only after
 * the one before it had answered.
 */
export function sequentialDepth(calls: readonly Pick<AwsCall, 'start' | 'end'>[]): number {
  return Math.max(0, ...callStages(calls).values());
}
