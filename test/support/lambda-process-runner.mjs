/**
 * One Lambda execution environment in its own Node.js process, for test/support/lambda-process.ts.
 *
 * It does what the Node.js runtime does around a function package: only node built-ins and
 * the AWS SDK v3 resolve from the package's imports (the runtime provides the SDK, nothing
 * else), `globalThis.awslambda` offers `streamifyResponse` and `HttpResponseStream` as the
 * runtime interface client does, the handler named `<module>.<export>` is loaded from the task
 * root at init, and each invocation gets a Lambda context with its deadline.
 *
 * Parent → runner (IPC): `{ type: 'invoke', id, event, mode: 'buffered' | 'streaming', deadline, requestId }`.
 * Runner → parent: `ready` or `init-error` once; per invocation either `result` or `error`
 * (buffered), or `chunk`…, `stream-end` when the response stream ends, and `end` when the
 * handler has returned (streaming). Every message carries `rssKb`, the resident set size then,
 * from which the parent keeps the "Max Memory Used" of the function.
 */
import { existsSync } from 'node:fs';
import Module, { isBuiltin, register } from 'node:module';
import { join, sep } from 'node:path';
import { Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';

const config = JSON.parse(process.argv[2]);
const taskRoot = config.taskRoot;
const insideTaskRoot = (file) => typeof file === 'string' && (file === taskRoot || file.startsWith(taskRoot + sep));

// What the Lambda Node.js runtime lets a package import beyond its own files: built-ins and
// the SDK it ships (@aws-sdk/*, resolved here from the project's node_modules). Anything
// else a bundle left external would resolve on this machine and fail in Lambda.
const providedByRuntime = (specifier) => isBuiltin(specifier) || specifier.startsWith('@aws-sdk/');
const isBare = (specifier) => !/^(\.{0,2}\/|file:|data:|node:)/.test(specifier);
register(new URL('./lambda-module-hooks.mjs', import.meta.url), { data: { taskRoot } });
const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (request, parent, ...rest) {
  if (isBare(request) && !providedByRuntime(request) && insideTaskRoot(parent?.filename)) {
    throw Object.assign(new Error(`Cannot find module '${request}' (not in the function package, and the Lambda runtime provides only the AWS SDK)`), {
      code: 'MODULE_NOT_FOUND',
    });
  }
  return resolveFilename.call(this, request, parent, ...rest);
};

// The runtime interface client's `awslambda` global.
const HANDLER_STREAMING = Symbol.for('aws.lambda.runtime.handler.streaming');
const STREAM_RESPONSE = 'response';
const PRELUDE_CONTENT_TYPE = 'application/vnd.awslambda.http-integration-response';
globalThis.awslambda = {
  streamifyResponse(handler) {
    handler[HANDLER_STREAMING] = STREAM_RESPONSE;
    return handler;
  },
  HttpResponseStream: class HttpResponseStream {
    static from(underlyingStream, prelude) {
      underlyingStream.setContentType(PRELUDE_CONTENT_TYPE);
      // JSON has no NUL byte, so the eight NULs after it end the prelude unambiguously.
      const metadataPrelude = JSON.stringify(prelude);
      underlyingStream._onBeforeFirstWrite = (write) => {
        write(metadataPrelude);
        write(new Uint8Array(8));
      };
      return underlyingStream;
    }
  },
};

// Sampled at every message: getrusage's maxrss would be the parent's, which Linux keeps across exec.
const rssKb = () => Math.round(process.memoryUsage().rss / 1024);
const send = (message) => new Promise((resolve) => process.send({ ...message, rssKb: rssKb() }, () => resolve()));

/**
 * The response stream a streaming handler writes to. Like the runtime's: the content type can
 * be set until the first write, which first runs `_onBeforeFirstWrite` (the HTTP prelude);
 * chunks that are neither strings nor bytes are written as JSON.
 */
class ResponseStream extends Writable {
  contentType = 'application/octet-stream';
  writes = 0;
  #started = false;

  constructor(sink) {
    super();
    this.sink = sink;
  }

  setContentType(type) {
    if (this.#started) throw new Error('Cannot set content-type, too late.');
    this.contentType = type;
  }

  write(chunk, encoding, callback) {
    const data = typeof chunk === 'string' || chunk instanceof Uint8Array ? chunk : JSON.stringify(chunk);
    if (!this.#started) {
      this.#started = true;
      if (typeof this._onBeforeFirstWrite === 'function') this._onBeforeFirstWrite((part) => super.write(part));
    }
    this.writes++;
    return super.write(data, encoding, callback);
  }

  _write(chunk, _encoding, callback) {
    this.sink(Buffer.from(chunk)).then(() => callback(), callback);
  }
}

function errorOf(error) {
  if (error instanceof Error) return { errorType: error.name, errorMessage: error.message, stackTrace: (error.stack ?? '').split('\n').slice(1) };
  return { errorType: 'Error', errorMessage: String(error), stackTrace: [] };
}

async function loadHandler() {
  const dot = config.handler.lastIndexOf('.');
  const moduleName = config.handler.slice(0, dot);
  const exportName = config.handler.slice(dot + 1);
  // The runtime's order: a CommonJS or ES module file named after the handler's module.
  const file = ['.js', '.mjs', '.cjs'].map((extension) => join(taskRoot, moduleName + extension)).find((candidate) => existsSync(candidate));
  if (!file) throw Object.assign(new Error(`Cannot find module '${moduleName}'`), { name: 'Runtime.ImportModuleError' });
  const loaded = await import(pathToFileURL(file).href);
  const handler = loaded[exportName];
  if (typeof handler !== 'function') throw Object.assign(new Error(`${config.handler} is undefined or not exported`), { name: 'Runtime.HandlerNotFound' });
  return handler;
}

function contextFor(message) {
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: config.functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: config.functionArn,
    memoryLimitInMB: String(config.memorySize),
    awsRequestId: message.requestId,
    logGroupName: `/aws/lambda/${config.functionName}`,
    logStreamName: 'test-process',
    getRemainingTimeInMillis: () => Math.max(0, message.deadline - Date.now()),
    done() {},
    fail() {},
    succeed() {},
  };
}

async function invoke(handler, message) {
  const context = contextFor(message);
  const streamingHandler = handler[HANDLER_STREAMING] === STREAM_RESPONSE;
  if (!streamingHandler) {
    let payload;
    try {
      payload = JSON.stringify((await handler(message.event, context)) ?? null);
    } catch (error) {
      return send({ type: 'error', id: message.id, ...errorOf(error) });
    }
    // A buffered handler behind a streaming integration: Lambda sends its JSON as the stream.
    if (message.mode === 'streaming') {
      await send({ type: 'chunk', id: message.id, data: Buffer.from(payload) });
      await send({ type: 'stream-end', id: message.id, contentType: 'application/json', writes: 1 });
      return send({ type: 'end', id: message.id });
    }
    return send({ type: 'result', id: message.id, payload });
  }

  const buffered = [];
  const stream = new ResponseStream(async (data) => {
    if (message.mode === 'streaming') await send({ type: 'chunk', id: message.id, data });
    else buffered.push(data);
  });
  // The response is over when the stream ends, even if the handler works on (usage is recorded then).
  const finished = new Promise((resolve) => stream.once('finish', resolve).once('error', resolve)).then(() =>
    message.mode === 'streaming' ? send({ type: 'stream-end', id: message.id, contentType: stream.contentType, writes: stream.writes }) : undefined,
  );
  try {
    await handler(message.event, stream, context);
  } catch (error) {
    stream.destroy();
    return send({ type: 'error', id: message.id, ...errorOf(error) });
  }
  if (!stream.writableEnded && !stream.destroyed) stream.end();
  await finished;
  if (message.mode === 'streaming') return send({ type: 'end', id: message.id });
  // A streaming handler invoked synchronously: its bytes are the response payload.
  return send({ type: 'result', id: message.id, payload: Buffer.concat(buffered).toString('utf8') });
}

let handler;
try {
  handler = await loadHandler();
} catch (error) {
  await send({ type: 'init-error', ...errorOf(error) });
  process.exit(1);
}
process.on('message', (message) => {
  if (message.type === 'invoke') void invoke(handler, message);
  else if (message.type === 'probe') void send({ type: 'probe', id: message.id, namespaces: Object.keys(process.namespaces ?? {}) });
});
await send({ type: 'ready', streaming: handler[HANDLER_STREAMING] === STREAM_RESPONSE });
