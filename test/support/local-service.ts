import { mkdtempSync, rmSync } from 'node:fs';
import { matchRoute } from '../../lambdas/routes';
import { responseMismatch } from './openapi-responses';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalRuntime, type LocalRuntime, type LocalRuntimeOptions } from '../../local/runtime';

export interface TestService {
  runtime: LocalRuntime;
  dataDir: string;
  /** Calls the service: `path` is relative to the base URL (e.g. `/models/user`). */
  call(
    path: string,
    options?: { key?: string; method?: string; body?: unknown; host?: string; headers?: Record<string, string> },
  ): Promise<{ status: number; headers: Headers; body: any; text: string }>;
  stop(): Promise<void>;
}

/**
 * The real local runtime (embedded DynamoDB in memory, local signer, same handler
 * exports, real HTTP on a loopback port) for integration tests. One per test file.
 */
export async function startTestService(options: LocalRuntimeOptions = {}): Promise<TestService> {
  const dataDir = mkdtempSync(join(tmpdir(), 'modelgate-test-'));
  // Request lines would drown the test output; warnings and errors still show.
  const runtime = await startLocalRuntime({ port: 0, persist: false, dataDir, logLevel: 'WARN', ...options });
  return {
    runtime,
    dataDir,
    async call(path, { key, method = 'GET', body, host, headers = {} } = {}) {
      const url = new URL(runtime.baseUrl + path);
      const requestHeaders: Record<string, string> = { ...headers };
      if (key !== undefined) requestHeaders.Authorization = `Bearer ${key}`;
      if (body !== undefined && typeof body !== 'string') requestHeaders['Content-Type'] = 'application/json';
      // fetch does not let callers set Host; a regional hostname goes through a raw request instead.
      if (host) return rawRequest(url, method, { ...requestHeaders, Host: host }, body);
      const response = await fetch(url, {
        method,
        headers: requestHeaders,
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      });
      const text = await response.text();
      // Every answer of a documented route is one the OpenAPI document describes.
      const matched = matchRoute(method, url.pathname);
      if (matched && 'route' in matched) {
        const why = responseMismatch(method, matched.resource, response.status, response.headers.get('content-type'), parse(text));
        if (why) throw new Error(`The response does not match the OpenAPI document: ${why}`);
      }
      return { status: response.status, headers: response.headers, body: parse(text), text };
    },
    async stop() {
      await runtime.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

async function rawRequest(url: URL, method: string, headers: Record<string, string>, body: unknown) {
  const { request } = await import('node:http');
  const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  return new Promise<{ status: number; headers: Headers; body: any; text: string }>((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const responseHeaders = new Headers();
        for (const [name, value] of Object.entries(res.headers)) if (typeof value === 'string') responseHeaders.set(name, value);
        resolve({ status: res.statusCode ?? 0, headers: responseHeaders, body: parse(text), text });
      });
    });
    req.on('error', reject);
    if (payload) req.write(payload);
    req.end();
  });
}
