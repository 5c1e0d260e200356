import { Logger } from '@aws-lambda-powertools/logger';
import type { ConstructorOptions } from '@aws-lambda-powertools/logger/types';
import type { LogLevel } from '../lambdas/config';

type LogItem = Parameters<Logger['printLog']>[1];

/** Attributes every line carries in Lambda that say nothing on a laptop. */
const HIDDEN = new Set([
  'level',
  'message',
  'timestamp',
  'service',
  'sampling_rate',
  'xray_trace_id',
  'cold_start',
  'function_arn',
  'function_memory_size',
  'function_name',
  'function_request_id',
  'function',
]);

/**
 * The Powertools logger of the local runtime: the same calls and attributes as in Lambda,
 * written as one readable line each, e.g.
 * `12:00:01.234 INFO  catalog  request route="GET /api/v1/models/user" status=200 latencyMs=3.1`.
 */
export class ReadableLogger extends Logger {
  constructor(
    options: ConstructorOptions & { logLevel: LogLevel },
    private readonly write: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
  ) {
    super(options);
  }

  protected override createLogger(options?: ConstructorOptions): Logger {
    return new ReadableLogger({ logLevel: 'INFO', ...options } as ConstructorOptions & { logLevel: LogLevel }, this.write);
  }

  protected override printLog(_logLevel: number, log: LogItem): void {
    log.prepareForPrint();
    const attributes = log.getAttributes() as Record<string, unknown>;
    const time = String(attributes.timestamp ?? new Date().toISOString()).slice(11, 23);
    const level = String(attributes.level ?? '').padEnd(5);
    const fn = String(attributes.function ?? '').padEnd(13);
    const fields = Object.entries(attributes)
      .filter(([key, value]) => !HIDDEN.has(key) && value !== undefined)
      .map(([key, value]) => `${key}=${format(value)}`);
    this.write([time, level, fn, String(attributes.message ?? ''), ...fields].join(' ').trimEnd());
  }
}

function format(value: unknown): string {
  if (typeof value === 'string') return /^[\w./:@-]+$/.test(value) ? value : JSON.stringify(value);
  if (value instanceof Object && 'stack' in value && typeof value.stack === 'string') return `\n${value.stack}`;
  return JSON.stringify(value);
}
