import { fork, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { PassThrough, type Readable } from 'node:stream';

/** One function as the template declares it, unpacked: what a Lambda execution environment runs. */
export interface LambdaFunctionSpec {
  /** The function's construct id in the stack, e.g. `Catalog`. */
  readonly name: string;
  readonly functionArn: string;
  /** The function package (its cloud assembly asset folder): the task root and working folder. */
  readonly codeDir: string;
  /** The template's `Handler`, `<module>.<export>`, e.g. `index.handler`. */
  readonly handler: string;
  /** The template's `Timeout`: an invocation still running after it is ended. */
  readonly timeoutSeconds: number;
  /** The template's `MemorySize`, in MB. */
  readonly memorySize: number;
  /** The whole environment of the process. */
  readonly environment: Readonly<Record<string, string>>;
}

export interface InvocationError {
  readonly errorType: string;
  readonly errorMessage: string;
}

/** A synchronous invocation's outcome: the serialized payload, or the function error. */
export type BufferedInvocation = { readonly ok: true; readonly payload: string } | { readonly ok: false; readonly error: InvocationError };

/** How a response stream ended: its content type and how many writes made its body, or the function error. */
export type StreamOutcome =
  | { readonly ok: true; readonly contentType: string; readonly writes: number }
  | { readonly ok: false; readonly error: InvocationError };

/** A response-streaming invocation (`InvokeWithResponseStream`). */
export interface StreamingInvocation {
  /** The bytes as the function writes them; ends with the response stream. */
  readonly body: Readable;
  /** Settles when the response stream ends (or the invocation fails). */
  readonly finished: Promise<StreamOutcome>;
  /** Settles when the handler has returned: the function may work on after its response. */
  readonly done: Promise<{ readonly ok: true } | { readonly ok: false; readonly error: InvocationError }>;
}

export interface LambdaProcess {
  readonly spec: LambdaFunctionSpec;
  /** Whether the handler is marked for response streaming (`awslambda.streamifyResponse`). */
  readonly streaming: boolean;
  /** The highest resident set size seen in any of its environments, in MB ("Max Memory Used"), sampled at each message. */
  readonly maxMemoryUsedMb: number;
  /** Environments started so far: 1, plus one per environment ended by a timeout or a crash. */
  readonly coldStarts: number;
  /** What the function printed (its log lines), newest last. */
  readonly logs: readonly string[];
  invoke(event: unknown): Promise<BufferedInvocation>;
  invokeStreaming(event: unknown): StreamingInvocation;
  /** The X-Ray SDK's context namespaces the environment registered (cls-hooked), if any. */
  probe(): Promise<{ namespaces: string[] }>;
  stop(): Promise<void>;
}

export class FunctionInitError extends Error {}

const RUNNER = join(__dirname, 'lambda-process-runner.mjs');
const MAX_LOG_LINES = 2000;

type RunnerMessage =
  | { type: 'ready'; streaming: boolean; rssKb: number }
  | { type: 'init-error'; errorType: string; errorMessage: string; rssKb: number }
  | { type: 'result'; id: string; payload: string; rssKb: number }
  | { type: 'error'; id: string; errorType: string; errorMessage: string; rssKb: number }
  | { type: 'chunk'; id: string; data: Uint8Array; rssKb: number }
  | { type: 'stream-end'; id: string; contentType: string; writes: number; rssKb: number }
  | { type: 'end'; id: string; rssKb: number }
  | { type: 'probe'; id: string; namespaces: string[]; rssKb: number };

/**
 * Starts a function in its own Node.js process (test/support/lambda-process-runner.mjs) with
 * exactly `spec.environment`, and waits for its init: the package's handler loaded as Lambda
 * loads it. Rejects with {@link FunctionInitError} when the package cannot start (a module the
 * runtime does not provide, a missing setting read at init, no such handler).
 *
 * Invocations run one at a time, as in one execution environment. One still running after
 * the function's timeout is ended by ending the process, and the next invocation starts a new
 * environment (a cold start).
 */
export async function startLambdaProcess(spec: LambdaFunctionSpec): Promise<LambdaProcess> {
  const logs: string[] = [];
  let maxRssKb = 0;
  let coldStarts = 0;
  let streaming = false;
  let child: ChildProcess | undefined;
  let queue: Promise<unknown> = Promise.resolve();
  const listeners = new Map<string, (message: RunnerMessage) => void>();
  let onExit: ((code: number | null) => void) | undefined;

  const record = (text: string) => {
    for (const line of text.split('\n')) if (line !== '') logs.push(line);
    if (logs.length > MAX_LOG_LINES) logs.splice(0, logs.length - MAX_LOG_LINES);
  };

  /** One execution environment: a process that has loaded the handler. */
  const startEnvironment = () =>
    new Promise<ChildProcess>((resolve, reject) => {
      coldStarts++;
      // Lambda gives V8 a heap bounded by the function's memory; so does this environment.
      const proc = fork(RUNNER, [JSON.stringify({ taskRoot: spec.codeDir, handler: spec.handler, functionName: spec.name, functionArn: spec.functionArn, memorySize: spec.memorySize })], {
        cwd: spec.codeDir,
        env: { ...spec.environment },
        execArgv: [`--max-old-space-size=${Math.floor(spec.memorySize * 0.9)}`],
        serialization: 'advanced',
        stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      });
      proc.stdout!.setEncoding('utf8').on('data', record);
      proc.stderr!.setEncoding('utf8').on('data', record);
      proc.on('message', (message: RunnerMessage) => {
        maxRssKb = Math.max(maxRssKb, message.rssKb);
        if (message.type === 'ready') {
          streaming = message.streaming;
          resolve(proc);
        } else if (message.type === 'init-error') {
          reject(new FunctionInitError(`${spec.name} failed its init: ${message.errorType}: ${message.errorMessage}\n${logs.slice(-20).join('\n')}`));
        } else listeners.get(message.id)?.(message);
      });
      proc.on('exit', (code) => {
        if (child === proc) child = undefined;
        reject(new FunctionInitError(`${spec.name} exited during its init (code ${code})\n${logs.slice(-20).join('\n')}`));
        onExit?.(code);
      });
    });

  const environment = async (): Promise<ChildProcess> => (child ??= await startEnvironment());

  const kill = (environmentProcess: ChildProcess) => {
    if (child === environmentProcess) child = undefined;
    environmentProcess.kill('SIGKILL');
  };

  /** Runs one invocation in the environment, after the ones before it; `handle` settles it. */
  const run = <T>(mode: 'buffered' | 'streaming', event: unknown, handle: (message: RunnerMessage, finish: (value: T) => void) => void, failed: (error: InvocationError) => T) => {
    const result = queue.then(async () => {
      let environmentProcess: ChildProcess;
      try {
        environmentProcess = await environment();
      } catch (error) {
        return failed({ errorType: 'Runtime.InitError', errorMessage: (error as Error).message });
      }
      const id = randomUUID();
      const deadline = Date.now() + spec.timeoutSeconds * 1000;
      return new Promise<T>((resolve) => {
        const finish = (value: T) => {
          clearTimeout(timer);
          listeners.delete(id);
          onExit = undefined;
          resolve(value);
        };
        const timer = setTimeout(() => {
          kill(environmentProcess);
          finish(failed({ errorType: 'Sandbox.Timedout', errorMessage: `Task timed out after ${spec.timeoutSeconds.toFixed(2)} seconds` }));
        }, deadline - Date.now());
        onExit = (code) => finish(failed({ errorType: 'Runtime.ExitError', errorMessage: `Runtime exited with error: exit status ${code}` }));
        listeners.set(id, (message) => handle(message, finish));
        environmentProcess.send({ type: 'invoke', id, event, mode, deadline, requestId: id });
      });
    });
    queue = result.catch(() => undefined);
    return result;
  };

  await environment().catch((error: Error) => {
    throw error instanceof FunctionInitError ? error : new FunctionInitError(error.message);
  });

  return {
    spec,
    get streaming() {
      return streaming;
    },
    get maxMemoryUsedMb() {
      return Math.ceil(maxRssKb / 1024);
    },
    get coldStarts() {
      return coldStarts;
    },
    logs,
    invoke: (event) =>
      run<BufferedInvocation>(
        'buffered',
        event,
        (message, finish) => {
          if (message.type === 'result') finish({ ok: true, payload: message.payload });
          else if (message.type === 'error') finish({ ok: false, error: { errorType: message.errorType, errorMessage: message.errorMessage } });
        },
        (error) => ({ ok: false, error }),
      ),
    invokeStreaming(event) {
      const body = new PassThrough();
      let settleFinished!: (outcome: StreamOutcome) => void;
      const finished = new Promise<StreamOutcome>((resolve) => (settleFinished = resolve));
      const endStream = (outcome: StreamOutcome) => {
        if (!body.writableEnded) body.end();
        settleFinished(outcome);
      };
      const done = run<Awaited<StreamingInvocation['done']>>(
        'streaming',
        event,
        (message, finish) => {
          if (message.type === 'chunk') {
            // A reader that went away (the client hung up) no longer takes bytes; the function runs on.
            if (!body.destroyed && !body.writableEnded) body.write(Buffer.from(message.data));
          } else if (message.type === 'stream-end') endStream({ ok: true, contentType: message.contentType, writes: message.writes });
          else if (message.type === 'end') finish({ ok: true });
          else if (message.type === 'error') {
            const error = { errorType: message.errorType, errorMessage: message.errorMessage };
            endStream({ ok: false, error });
            finish({ ok: false, error });
          }
        },
        (error) => {
          endStream({ ok: false, error });
          return { ok: false, error };
        },
      );
      return { body, finished, done };
    },
    async probe() {
      const environmentProcess = await environment();
      const id = randomUUID();
      return new Promise((resolve) => {
        listeners.set(id, (message) => {
          if (message.type !== 'probe') return;
          listeners.delete(id);
          resolve({ namespaces: message.namespaces });
        });
        environmentProcess.send({ type: 'probe', id });
      });
    },
    async stop() {
      const environmentProcess = child;
      child = undefined;
      if (!environmentProcess || environmentProcess.exitCode !== null) return;
      await new Promise<void>((resolve) => {
        environmentProcess.once('exit', () => resolve());
        environmentProcess.kill('SIGKILL');
      });
    },
  };
}
