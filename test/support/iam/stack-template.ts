import { createHash } from 'node:crypto';
import { closeSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import type { ModelgateProps } from '../../../lib';
import type { StackTemplate } from '../cloud-assembly';

/**
 * The CDK and the app, loaded only to synthesize: a suite whose stack is in the cache (and a unit
 * test, which needs none) does not pay for loading them.
 */
function cdk() {
  return {
    ...(require('aws-cdk-lib') as typeof import('aws-cdk-lib')),
    ...(require('aws-cdk-lib/cx-api') as typeof import('aws-cdk-lib/cx-api')),
    ...(require('../../../lib') as typeof import('../../../lib')),
    ...(require('../../../lib/app') as typeof import('../../../lib/app')),
    ...(require('../../lib/template-helpers') as typeof import('../../lib/template-helpers')),
    ...(require('../cloud-assembly') as typeof import('../cloud-assembly')),
  };
}

const ROOT = join(__dirname, '..', '..', '..');

/** The synthesized stack the IAM gate evaluates against: its name and CloudFormation template. */
export interface SynthesizedStack {
  readonly stackName: string;
  readonly template: StackTemplate;
  /**
   * The construct path of the modelgate instance the gate evaluates, e.g. `Modelgate/Default`
   * (the CLI's stack) or `UserStack/Gateway` (an instance in a stack of one's own): its
   * functions and tables are found below it.
   * @default the one instance the template holds
   */
  readonly instancePath?: string;
}

/** A synthesized stack (a JSON file) to use instead of the cache's, for a run that sets it. */
export const STACK_FILE_ENV = 'MODELGATE_IAM_STACK_FILE';

/**
 * Synthesizes the app the one way it is built (lib/app.ts): cdk.json's context, the suites'
 * account and region, no bundling (the policies do not depend on it), and construct paths in
 * the template's metadata as the CLI writes them, so functions are found by their path.
 */
export function synthesizeStack(): SynthesizedStack {
  const { buildModelgateApp, cdkJsonContext, PATH_METADATA_ENABLE_CONTEXT, SYNTH_ENV } = cdk();
  const outdir = mkdtempSync(join(tmpdir(), 'modelgate-iam-synth-'));
  try {
    const { app, stack } = buildModelgateApp({
      context: { ...cdkJsonContext(), [PATH_METADATA_ENABLE_CONTEXT]: true },
      env: SYNTH_ENV,
      bundlingStacks: [],
      outdir,
    });
    const template = app.synth().getStackByName(stack.stackName).template as StackTemplate;
    return { stackName: stack.stackName, template };
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

/**
 * An instance in a stack of one's own (`Platform`, construct id `Gateway`), as a user's app
 * builds it with `props`: cdk.json's feature flags but none of its modelgate settings, the
 * suites' account and region, no bundling, construct paths in the metadata. The gate evaluates
 * that instance.
 */
export function synthesizeEmbeddedInstance(props: ModelgateProps): SynthesizedStack {
  const { App, Stack, Modelgate, FEATURE_FLAGS, PATH_METADATA_ENABLE_CONTEXT, SYNTH_ENV } = cdk();
  const outdir = mkdtempSync(join(tmpdir(), 'modelgate-iam-synth-'));
  try {
    const app = new App({ context: { ...FEATURE_FLAGS, [PATH_METADATA_ENABLE_CONTEXT]: true, 'aws:cdk:bundling-stacks': [] }, outdir });
    const stack = new Stack(app, 'Platform', { env: SYNTH_ENV });
    const gateway = new Modelgate(stack, 'Gateway', props);
    const template = app.synth().getStackByName(stack.stackName).template as StackTemplate;
    return { stackName: stack.stackName, template, instancePath: gateway.node.path };
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

/**
 * The synthesized stack from the cache under node_modules/.cache, synthesizing it when the
 * sources it is built from changed (the modules lib/app.ts imports, cdk.json, the lock file,
 * this module):
 * synthesis takes seconds, and a run that changed none of them reuses the last one. Files are
 * named by that hash and written atomically, so concurrent runs in one checkout agree.
 */
export function cachedStackFile(): string {
  const cacheDir = join(ROOT, 'node_modules', '.cache', 'modelgate-iam');
  const file = join(cacheDir, `stack-${synthesisInputsHash()}.json`);
  if (exists(file)) return file;
  mkdirSync(cacheDir, { recursive: true });
  // One synthesis per change, however many workers ask at once: the first takes the lock, the
  // others wait for its file (a lock older than a synthesis can take is a dead worker's).
  const lock = `${file}.lock`;
  for (;;) {
    if (exists(file)) return file;
    try {
      closeSync(openSync(lock, 'wx'));
      break;
    } catch {
      if (Date.now() - (statOrUndefined(lock)?.mtimeMs ?? 0) > STALE_LOCK_MS) rmSync(lock, { force: true });
      else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
    }
  }
  try {
    const partial = `${file}.${process.pid}.tmp`;
    writeFileSync(partial, JSON.stringify(synthesizeStack()));
    renameSync(partial, file);
    pruneOldStacks(cacheDir, file);
    return file;
  } finally {
    rmSync(lock, { force: true });
  }
}

const STALE_LOCK_MS = 120_000;
const statOrUndefined = (path: string) => {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
};
const exists = (path: string) => statOrUndefined(path) !== undefined;

/** The synthesized stack of this jest run, or from the cache outside jest. */
export function loadStack(): SynthesizedStack {
  return JSON.parse(readFileSync(process.env[STACK_FILE_ENV] ?? cachedStackFile(), 'utf8')) as SynthesizedStack;
}

function synthesisInputsHash(): string {
  const hash = createHash('sha256');
  const files = [...importedModules(join(ROOT, 'lib', 'app.ts')), join(ROOT, 'cdk.json'), join(ROOT, 'package-lock.json'), __filename];
  for (const file of files) hash.update(relative(ROOT, file)).update('\0').update(readFileSync(file)).update('\0');
  return hash.digest('hex').slice(0, 16);
}

/**
 * The project's modules `entry` imports, directly or not (relative imports only; packages
 * are covered by the lock file): a handler edit that the stack does not import keeps the cache.
 */
function importedModules(entry: string): string[] {
  const seen = new Set<string>();
  const pending = [entry];
  while (pending.length > 0) {
    const file = pending.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    if (!file.endsWith('.ts')) continue;
    const source = readFileSync(file, 'utf8');
    for (const [, specifier] of source.matchAll(/(?:from|import|require\()\s*['"](\.{1,2}\/[^'"]+)['"]/g)) {
      const resolved = resolveModule(join(dirname(file), specifier!));
      if (resolved) pending.push(resolved);
    }
  }
  return [...seen].sort();
}

function resolveModule(base: string): string | undefined {
  return [base, `${base}.ts`, join(base, 'index.ts')].find((candidate) => {
    try {
      return statSync(candidate).isFile();
    } catch {
      return false;
    }
  });
}

/** Keeps the newest few: other checkouts' runs may still read theirs. */
function pruneOldStacks(cacheDir: string, keep: string): void {
  const stacks = readdirSync(cacheDir)
    .filter((name) => /^stack-[0-9a-f]{16}\.json$/.test(name))
    .map((name) => ({ file: join(cacheDir, name), mtime: statSync(join(cacheDir, name)).mtimeMs }))
    .sort((a, b) => b.mtime - a.mtime);
  for (const { file } of stacks.slice(5)) if (file !== keep) rmSync(file, { force: true });
}
