import { mkdtempSync, rmSync } from 'node:fs';
import { matchRoute } from '../../lambdas/routes';
import { acceptedQueryMismatch, acceptedRequestMismatch, responseMismatch } from './openapi-responses';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ObservedExchange } from '../../local/http-server';
import { startLocalRuntime, type LocalRuntime } from '../../local/runtime';
import type { LocalRuntimeOptions } from '../../local/runtime-options';
import { startTestDynamoDb } from './dynamodb-local';
import { startDynamoDbGate } from './iam/dynamodb-gate';
import { IamGate } from './iam/iam-gate';
import { loadStack, type SynthesizedStack } from './iam/stack-template';

export interface TestServiceOptions extends LocalRuntimeOptions {
  /** What the functions' AWS requests are evaluated against (see {@link TestService.iam}). */
  iam?: {
    /** @default the stack as the jest run synthesized it (test/support/iam/jest-global-setup.ts) */
    stack?: SynthesizedStack;
    /** The test asserts its denials itself; otherwise any denial fails `stop`. @default false */
    expectDenials?: boolean;
  };
}

export interface TestService {
  runtime: LocalRuntime;
  dataDir: string;
  /**
   * The IAM gate in front of the embedded DynamoDB: every request a function makes is evaluated
   * against that function's role policies from the synthesized template, as IAM would, and a
   * denied one gets DynamoDB's AccessDeniedException. Requests of test set-up and the operator
   * (the `local` credentials) are not gated.
   */
  iam: IamGate;
  /** Calls the service: `path` is relative to the base URL (e.g. `/models/user`). */
  call(
    path: string,
    options?: { key?: string; method?: string; body?: unknown; host?: string; headers?: Record<string, string> },
  ): Promise<{ status: number; headers: Headers; body: any; text: string }>;
  stop(): Promise<void>;
}

/**
 * The real local runtime (the test DynamoDB in memory, ./dynamodb-local.ts, local signer, same handler
 * exports, real HTTP on a loopback port) for integration tests. One per test file. Each
 * function's DynamoDB requests pass the IAM gate ({@link TestService.iam}).
 */
export async function startTestService(options: TestServiceOptions = {}): Promise<TestService> {
  const { iam: iamOptions, observe: alsoObserve, ...runtimeOptions } = options;
  const dataDir = mkdtempSync(join(tmpdir(), 'modelgate-test-'));
  const iam = new IamGate(iamOptions?.stack ?? stackOfThisRun());
  // Every answer the server sends, whatever the client (fetch, the SDKs, a browser), is held
  // to the OpenAPI document; a mismatch `call` has not already thrown fails `stop`.
  const mismatches: string[] = [];
  const thrown = new Set<string>();
  const observe = (exchange: ObservedExchange) => {
    const why = documentMismatch(exchange.method, exchange.resource, exchange.search, exchange.status, exchange.contentType ?? null, exchange.body, sentBody({ 'content-type': exchange.requestContentType ?? '' }, exchange.requestBody));
    if (why) mismatches.push(why);
    alsoObserve?.(exchange);
  };
  // Request lines would drown the test output; warnings and errors still show.
  const runtime = await startLocalRuntime({
    port: 0,
    persist: false,
    dataDir,
    logLevel: 'WARN',
    observe,
    interposeDynamoDb: (endpoint) => startDynamoDbGate(endpoint, iam),
    // The rollup runs when a test calls runtime.rollUpUsage(), not on a timer beside its requests.
    usageRollupEveryMs: 0,
    // Data kept on disk is the embedded dynalite's (its own suites test that); the rest runs on the test DynamoDB.
    ...(runtimeOptions.persist ? {} : { startDynamoDb: startTestDynamoDb }),
    ...runtimeOptions,
  });
  return {
    runtime,
    dataDir,
    iam,
    async call(path, { key, method = 'GET', body, host, headers = {} } = {}) {
      const url = new URL(runtime.baseUrl + path);
      const requestHeaders: Record<string, string> = { ...headers };
      if (key !== undefined) requestHeaders.Authorization = `Bearer ${key}`;
      // A body is JSON unless the test says otherwise (a form, or a media type the service must refuse).
      const typed = Object.keys(headers).some((name) => name.toLowerCase() === 'content-type');
      if (body !== undefined && !typed) requestHeaders['Content-Type'] = 'application/json';
      const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
      // fetch does not let callers set Host; a regional hostname goes through a raw request instead.
      const response = host
        ? await rawRequest(url, method, { ...requestHeaders, Host: host }, payload)
        : await fetch(url, { method, headers: requestHeaders, body: payload }).then(async (r) => ({ status: r.status, headers: r.headers, text: await r.text() }));
      const parsed = parse(response.text);
      const matched = matchRoute(method, url.pathname);
      if (matched && 'route' in matched) {
        const why = documentMismatch(method, matched.resource, url.search, response.status, response.headers.get('content-type'), response.text, sentBody(requestHeaders, body));
        if (why) {
          thrown.add(why);
          throw new Error(`The exchange does not match the OpenAPI document: ${why}`);
        }
      }
      return { ...response, body: parsed };
    },
    async stop() {
      await runtime.stop();
      rmSync(dataDir, { recursive: true, force: true });
      // What the functions used under the stack as synthesized, for the run's summary; an edited stack's gate says nothing about it.
      if (!iamOptions?.stack) iam.writeSeen(currentTestPath());
      const problems: string[] = [];
      const unreported = [...new Set(mismatches)].filter((why) => !thrown.has(why));
      if (unreported.length) problems.push(`Answers that do not match the OpenAPI document:\n${unreported.join('\n')}`);
      // A denial a handler swallowed (a best-effort write) would fail only in AWS: fail here.
      if (iam.errors.length) problems.push(`AWS requests the IAM gate could not evaluate:\n${[...new Set(iam.errors)].join('\n')}`);
      if (!iamOptions?.expectDenials && iam.denials.length) {
        problems.push(`AWS requests the stack's IAM policies deny:\n${[...new Set(iam.denials.map((denial) => denial.message))].join('\n')}`);
      }
      if (problems.length) throw new Error(problems.join('\n'));
    },
  };
}

/** Synthesized once per jest run, read once per test file. */
let stack: SynthesizedStack | undefined;
function stackOfThisRun(): SynthesizedStack {
  stack ??= loadStack();
  return stack;
}

function currentTestPath(): string | undefined {
  return (globalThis as { expect?: { getState(): { testPath?: string } } }).expect?.getState().testPath;
}

/**
 * Why an exchange does not match the OpenAPI document, or null: the answer must be one the
 * document describes (JSON parsed from `text`, streams event by event), and a JSON body the
 * service accepted must be one the document allows, and so must its documented query parameters.
 */
function documentMismatch(
  method: string,
  resource: string,
  search: string,
  status: number,
  contentType: string | null,
  text: string,
  requestBody: { media: string; value: unknown } | undefined,
): string | null {
  const isJson = (contentType ?? '').startsWith('application/json');
  return (
    responseMismatch(method, resource, status, contentType, isJson ? parse(text) : text) ??
    (status < 300 && requestBody !== undefined ? acceptedRequestMismatch(method, resource, requestBody.value, requestBody.media) : null) ??
    (status < 300 ? acceptedQueryMismatch(method, resource, search) : null)
  );
}

/**
 * The body a request carried, as the document types it: JSON parsed, a form as its fields, any
 * other media type (or none) as sent, which no operation documents; undefined for no body.
 */
function sentBody(headers: Record<string, string>, body: unknown): { media: string; value: unknown } | undefined {
  const type = Object.entries(headers).find(([name]) => name.toLowerCase() === 'content-type')?.[1]?.split(';')[0]?.trim().toLowerCase();
  if (body === undefined || body === '') return undefined;
  if (type === 'application/json') return { media: type, value: typeof body === 'string' ? parse(body) : body };
  if (type === 'application/x-www-form-urlencoded' && typeof body === 'string') return { media: type, value: Object.fromEntries(new URLSearchParams(body)) };
  return { media: type || 'no content type', value: body };
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

async function rawRequest(url: URL, method: string, headers: Record<string, string>, payload: string | undefined) {
  const { request } = await import('node:http');
  return new Promise<{ status: number; headers: Headers; text: string }>((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const responseHeaders = new Headers();
        for (const [name, value] of Object.entries(res.headers)) if (typeof value === 'string') responseHeaders.set(name, value);
        resolve({ status: res.statusCode ?? 0, headers: responseHeaders, text: Buffer.concat(chunks).toString('utf8') });
      });
    });
    req.on('error', reject);
    if (payload) req.write(payload);
    req.end();
  });
}
