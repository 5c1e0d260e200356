import { AsyncLocalStorage } from 'node:async_hooks';
import type { DeserializeMiddleware, HandlerExecutionContext, InitializeMiddleware, MiddlewareStack } from '@smithy/types';
import type { Signer } from '../lambdas/signing/signer';
import { itemAccesses, type ItemAccess } from './dynamodb-capacity';

/**
 * What a request costs in AWS: its round trips to AWS services, not its CPU. The local runtime
 * can report every call its functions make through the AWS SDK (and every signature, KMS `Sign`
 * in AWS), each with the request it served, so tests assert how many calls a route makes and
 * in how many sequential stages, and the bench models AWS latency from them. Each call also
 * says how long the service itself took (the embedded DynamoDB's time is not the gateway's),
 * and, when items are recorded, which items and index entries it read and wrote, their sizes
 * and the units they took (local/dynamodb-capacity.ts): the scale model's input
 * (local/scale-model.ts).
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
  /**
   * Within that, from the request being sent (its first attempt) to its answer (its last): the
   * service's time (the embedded DynamoDB's, the signature's), without the SDK's own work around it.
   */
  serviceStart: number;
  serviceEnd: number;
  /** What a DynamoDB call read and wrote, item by item, when items are recorded ({@link CallRecording}). */
  items?: ItemAccess[];
  /** The key a KMS call used. */
  keyId?: string;
}

/** Receives each call as its answer (or error) arrives. */
export type AwsCallObserver = (call: AwsCall) => void;

/** The request each asynchronous path serves, set by the local server around every invocation. */
export const requestScope = new AsyncLocalStorage<string>();

interface MiddlewareClient {
  middlewareStack: Pick<MiddlewareStack<any, any>, 'add' | 'addRelativeTo'>;
}

/**
 * What is recorded of each call: its timing only, or also the items it read and wrote
 * (`items`). To size what a write leaves, the observer then asks for the written item back
 * (`ReturnValues`) where the caller did not, and hands the caller the answer it asked for.
 */
export type CallRecording = 'timing' | 'items';

/** The service time of the call under way, added up over its attempts. */
type TimedContext = HandlerExecutionContext & { modelgateServiceStart?: number; modelgateServiceEnd?: number };

/**
 * Reports every command of `client` to `observe`, measured around the whole call (retries
 * included), as the caller waits for it, with the part of it the service took.
 */
export function observeClientCalls(client: MiddlewareClient, functionName: string, service: string, observe: AwsCallObserver, recording: CallRecording = 'timing'): void {
  const middleware: InitializeMiddleware<any, any> = (next, context: TimedContext) => async (args) => {
    const requestId = requestScope.getStore();
    const command = context.commandName?.replace(/Command$/, '') ?? 'unknown';
    const asked = recording === 'items' ? imageRequest(command, args.input) : undefined;
    const start = performance.now();
    let output: Record<string, unknown> | undefined;
    let error: unknown;
    try {
      const result = await next(asked ? { ...args, input: { ...args.input, ReturnValues: asked } } : args);
      output = result.output as Record<string, unknown>;
      return asked ? { ...result, output: withoutAttributes(output) } : result;
    } catch (thrown) {
      error = thrown;
      throw thrown;
    } finally {
      const end = performance.now();
      const items = recording === 'items' ? itemAccesses({ command, input: args.input, output, error }) : undefined;
      const serviceStart = context.modelgateServiceStart ?? end;
      observe({ requestId, functionName, service, command, tables: tablesOf(args.input), start, end, serviceStart, serviceEnd: context.modelgateServiceEnd ?? serviceStart, items });
    }
  };
  // Innermost: around sending the request and receiving its answer, without the SDK's work.
  const serviceTime: DeserializeMiddleware<any, any> = (next, context: TimedContext) => async (args) => {
    context.modelgateServiceStart ??= performance.now();
    try {
      return await next(args);
    } finally {
      // eslint-disable-next-line require-atomic-updates -- the context is this one call's: nothing else writes it.
      context.modelgateServiceEnd = performance.now();
    }
  };
  client.middlewareStack.add(middleware, { step: 'initialize', name: 'modelgateCallObserver' });
  client.middlewareStack.addRelativeTo(serviceTime, { relation: 'after', toMiddleware: 'deserializerMiddleware', name: 'modelgateServiceTime' });
}

/**
 * The item image a write is asked to return so it can be sized (the new one of an update, the
 * replaced or deleted one of a put or delete), when the caller asked for none.
 */
function imageRequest(command: string, input: { ReturnValues?: string }): string | undefined {
  if (input.ReturnValues !== undefined && input.ReturnValues !== 'NONE') return undefined;
  if (command === 'UpdateItem') return 'ALL_NEW';
  if (command === 'PutItem' || command === 'DeleteItem') return 'ALL_OLD';
  return undefined;
}

function withoutAttributes(output: Record<string, unknown>): Record<string, unknown> {
  const { Attributes: _asked, ...rest } = output;
  return rest;
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
        const end = performance.now();
        observe({ requestId, functionName, service: 'KMS', command: 'Sign', tables: [], start, end, serviceStart: start, serviceEnd: end, keyId: signer.kid });
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
 * started. Calls that overlap in time share a stage. An upper bound of the chain of round trips
 * the call waited on: exact where a call waits for everything that answered before it (a join
 * is as deep as its deepest member, whichever answered last), one too many where a call that
 * answered early is taken as waited for by calls that waited only for a slower one. So a route
 * starts a branch beside the calls that wait as it does, not beside an earlier one.
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

/** Per call, as a function in the table's region sees them: single-digit milliseconds. */
export const AWS_LATENCY_MS: Readonly<Record<string, number>> = { DynamoDB: 5, KMS: 10 };

/** What the calls' round trips take in AWS: each stage costs its slowest call at {@link AWS_LATENCY_MS}. */
export function modelledLatencyMs(calls: readonly AwsCall[]): number {
  const stages = new Map<number, number>();
  for (const [call, stage] of callStages(calls)) stages.set(stage, Math.max(stages.get(stage) ?? 0, AWS_LATENCY_MS[call.service] ?? 5));
  return [...stages.values()].reduce((sum, ms) => sum + ms, 0);
}

/**
 * How long the calls' services (the embedded DynamoDB, the local signer) were at work on them:
 * the union of their service times, so calls side by side count once.
 */
export function serviceMs(calls: readonly Pick<AwsCall, 'serviceStart' | 'serviceEnd'>[]): number {
  const spans = [...calls].sort((a, b) => a.serviceStart - b.serviceStart);
  let total = 0;
  let reached = -Infinity;
  for (const { serviceStart, serviceEnd } of spans) {
    const from = Math.max(serviceStart, reached);
    if (serviceEnd > from) total += serviceEnd - from;
    reached = Math.max(reached, serviceEnd);
  }
  return total;
}

