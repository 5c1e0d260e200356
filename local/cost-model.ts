import type { FunctionId } from '../lambdas/routes';
import { memoryOf } from '../lib/function-memory';
import { modelledLatencyMs, serviceMs, type AwsCall } from './aws-calls';

/**
 * What a million requests of a route cost in AWS, from what requests of it did on the local
 * runtime (local/aws-calls.ts): the DynamoDB read and write units they consumed (index writes
 * included) and the KMS signatures they made, a modelled Lambda duration, the log lines each
 * request writes, its sampled traces and the bytes of its answer, priced at the on-demand list
 * prices below. Fixed monthly charges (the web ACL and its rules, the KMS key, storage, log
 * storage) are left out: they do not grow with requests.
 */
export const PRICES = Object.freeze({
  region: 'us-east-1',
  /** When the prices were taken from AWS's pricing pages. */
  date: '2026-11-26',
  /** Lambda on arm64, per GB-second (the first 7.5 billion GB-seconds of a month). */
  lambdaGbSecond: 0.0000133334,
  lambdaRequest: 0.2 / 1e6,
  /** API Gateway REST API, per request (the first 333 million of a month). */
  apiGatewayRequest: 3.5 / 1e6,
  /** AWS WAF, per request a web ACL inspects. */
  wafRequest: 0.6 / 1e6,
  /** DynamoDB on-demand, Standard table class: a write request unit (1 KB) and a read request unit (4 KB strongly consistent, 8 KB eventually). */
  writeRequestUnit: 0.625 / 1e6,
  readRequestUnit: 0.125 / 1e6,
  /** KMS, asymmetric requests other than RSA 2048: an ECC_NIST_P256 `Sign`. */
  kmsAsymmetricRequest: 0.15 / 1e4,
  /** CloudWatch Logs, per GB ingested (standard log class). */
  logsIngestedGb: 0.5,
  /** X-Ray, per trace recorded. */
  xrayTraceRecorded: 5 / 1e6,
  /** Data transfer out to the internet, per GB (the first 10 TB of a month). */
  dataTransferOutGb: 0.09,
});

/**
 * What each request writes to CloudWatch Logs, in bytes: the stage's access log line (a JSON
 * object of 17 fields, lib/constructs/api.ts), the function's request line (its JSON log line,
 * lambdas/http/request-log.ts) and Lambda's own `START`, `END` and `REPORT` lines, as
 * measured on sample lines of each.
 */
export const LOG_BYTES_PER_REQUEST = 520 + 560 + 380;

/**
 * The share of requests X-Ray records a trace of: the default sampling rule keeps the first
 * request of each second and 5% of the rest, so 5% at any rate these prices matter at.
 */
export const XRAY_SAMPLED_SHARE = 0.05;

/** Lambda gives one full vCPU at this much memory, and CPU in proportion below it. */
const FULL_VCPU_MB = 1769;

/** What requests of one route did on the local runtime. */
export interface RouteSample {
  route: string;
  functionName: FunctionId;
  /** Every AWS call of each request, request by request. */
  callsPerRequest: readonly (readonly AwsCall[])[];
  /** Each request's time on the local runtime, to the end of its invocation, ms. */
  localMs: readonly number[];
  /** How long each invocation waits on a provider, ms (completions). @default 0 */
  upstreamMs?: number;
  /** The bytes of each answer as the gateway sends it. @default none */
  answerBytes?: readonly number[];
}

/** A route's modelled Lambda duration, its units and signatures per request, and its price per million requests, by charge. */
export interface RouteCost {
  route: string;
  memoryMb: number;
  /** The modelled Lambda duration: CPU at the function's share of a vCPU, the AWS round trips, the provider. */
  durationMs: number;
  readUnits: number;
  writeUnits: number;
  signs: number;
  /** The answer's median size, as sent. */
  answerBytes: number;
  /** US dollars per million requests. */
  perMillion: {
    compute: number;
    lambdaRequests: number;
    apiGateway: number;
    waf: number;
    reads: number;
    writes: number;
    kms: number;
    logs: number;
    traces: number;
    transfer: number;
    total: number;
  };
}

/** Prices a million requests of a route from its samples on the local runtime, at {@link PRICES}. */
export function routeCost(sample: RouteSample): RouteCost {
  const memoryMb = memoryOf(sample.functionName);
  const requests = sample.callsPerRequest.length;
  // The gateway's own work: the local time less what the embedded DynamoDB and signer took,
  // slowed to the function's share of a vCPU.
  const cpuMs = median(sample.localMs.map((ms, i) => Math.max(0, ms - serviceMs(sample.callsPerRequest[i]!)))) * (FULL_VCPU_MB / memoryMb);
  const roundTripsMs = median(sample.callsPerRequest.map(modelledLatencyMs));
  const durationMs = Math.ceil(cpuMs + roundTripsMs + (sample.upstreamMs ?? 0));
  const all = sample.callsPerRequest.flat();
  const units = (operation: 'read' | 'write') => all.flatMap((call) => call.items ?? []).filter((access) => access.operation === operation).reduce((sum, access) => sum + access.units, 0) / requests;
  const readUnits = units('read');
  const writeUnits = units('write');
  const signs = all.filter((call) => call.service === 'KMS' && call.command === 'Sign').length / requests;
  const million = 1e6;
  const answerBytes = median(sample.answerBytes ?? []);
  const gigabytes = (bytes: number) => bytes / 1024 ** 3;
  const perMillion = {
    compute: million * (memoryMb / 1024) * (durationMs / 1000) * PRICES.lambdaGbSecond,
    lambdaRequests: million * PRICES.lambdaRequest,
    apiGateway: million * PRICES.apiGatewayRequest,
    waf: million * PRICES.wafRequest,
    reads: million * readUnits * PRICES.readRequestUnit,
    writes: million * writeUnits * PRICES.writeRequestUnit,
    kms: million * signs * PRICES.kmsAsymmetricRequest,
    logs: million * gigabytes(LOG_BYTES_PER_REQUEST) * PRICES.logsIngestedGb,
    traces: million * XRAY_SAMPLED_SHARE * PRICES.xrayTraceRecorded,
    transfer: million * gigabytes(answerBytes) * PRICES.dataTransferOutGb,
    total: 0,
  };
  perMillion.total = Object.values(perMillion).reduce((sum, dollars) => sum + dollars, 0);
  return { route: sample.route, memoryMb, durationMs, readUnits, writeUnits, signs, answerBytes, perMillion };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}
