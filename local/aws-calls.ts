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
 * The number of sequential stages: the longest chain of calls each of which started only after
 * the one before it had answered. Calls that overlap in time count as one stage.
 */
export function sequentialDepth(calls: readonly Pick<AwsCall, 'start' | 'end'>[]): number {
  const sorted = [...calls].sort((a, b) => a.start - b.start);
  const depth: number[] = [];
  let deepest = 0;
  for (let i = 0; i < sorted.length; i++) {
    let before = 0;
    for (let j = 0; j < i; j++) if (sorted[j]!.end <= sorted[i]!.start) before = Math.max(before, depth[j]!);
    depth[i] = before + 1;
    deepest = Math.max(deepest, depth[i]!);
  }
  return deepest;
}
