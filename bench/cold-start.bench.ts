/**
 * Cold import time of each function bundle (`npm run bench`): what a cold start spends
 * loading the function before its first request, against a floor, a bundle that imports only
 * the AWS SDK clients that function imports (the SDK is the Lambda runtime's and stays
 * external). Aim: at most 1.3x the floor. Bundled with esbuild as the stack bundles them
 * (`SERVICE_BUNDLING`: minified ESM, the SDK external); each import is timed in a new
 * process, the median of 7.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { TABLE_SCHEMAS } from '../lambdas/aws/table-schemas';
import { DEFAULT_SETTINGS, SETTINGS, settingsEnvironment, type EnvironmentSettingName, type SettingName } from '../lambdas/settings';
import { SERVICE_BUNDLING } from '../lib/constructs/service-function';

const ROOT = join(__dirname, '..');
/** Inside the project, so the external SDK packages resolve from its node_modules. */
const OUT = join(ROOT, 'node_modules', '.cache', 'modelgate-cold-start');
const FUNCTIONS = ['catalog', 'token-exchange', 'jwks', 'management', 'inference'] as const;
const RUNS = 7;
const AIM = 1.3;

/** The configuration every entry reads at its cold start: every setting of the table, as the stack writes it. */
const ENVIRONMENT: NodeJS.ProcessEnv = {
  ...process.env,
  ...Object.fromEntries(Object.values(TABLE_SCHEMAS).map((schema) => [schema.envVar, schema.localName])),
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'bench',
  AWS_SECRET_ACCESS_KEY: 'bench',
  ...settingsEnvironment(
    { ...DEFAULT_SETTINGS, apiBaseUrl: 'https://api.example.com/api/v1', inferenceUpstreams: { '*': 'development-echo' }, logLevel: 'ERROR' },
    (Object.keys(SETTINGS) as SettingName[]).filter((name): name is EnvironmentSettingName => 'env' in SETTINGS[name]),
  ),
  PROVIDER_CREDENTIALS_SECRET_ARN: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:provider-credentials-AbCdEf',
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
};

async function bundle(name: string): Promise<{ file: string; sdkImports: string[] }> {
  const file = join(OUT, `${name}.mjs`);
  const result = await build({
    entryPoints: [join(ROOT, 'lambdas', 'functions', name, 'entry.ts')],
    outfile: file,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    minify: SERVICE_BUNDLING.minify,
    mainFields: [...SERVICE_BUNDLING.mainFields],
    external: [...SERVICE_BUNDLING.externalModules],
    banner: { js: SERVICE_BUNDLING.banner },
    metafile: true,
    logLevel: 'error',
  });
  const imports = Object.values(result.metafile.outputs).flatMap((output) => output.imports.filter((i) => i.external).map((i) => i.path));
  return { file, sdkImports: [...new Set(imports.filter((path) => path.startsWith('@aws-sdk/')))].sort() };
}

/** Milliseconds to import `file` in a fresh process, the median of {@link RUNS}. */
function importTime(file: string): number {
  const script = `const s = process.hrtime.bigint(); await import(${JSON.stringify(pathToFileURL(file).href)}); console.log(Number(process.hrtime.bigint() - s) / 1e6);`;
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, env: ENVIRONMENT, encoding: 'utf8' });
    if (run.status !== 0) throw new Error(`importing ${file} failed: ${run.stderr}`);
    times.push(Number(run.stdout.trim().split('\n').pop()));
  }
  return times.sort((a, b) => a - b)[Math.floor(RUNS / 2)]!;
}

async function main(): Promise<void> {
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(OUT, { recursive: true });
  console.log(`\nCold import of each function bundle against its floor (the AWS SDK clients it imports, nothing else); aim at most ${AIM}x`);
  console.log('| function | bundle KB | SDK packages | import ms | floor ms | ratio |');
  console.log('|---|---:|---|---:|---:|---:|');
  const missed: string[] = [];
  for (const name of FUNCTIONS) {
    const { file, sdkImports } = await bundle(name);
    const floor = join(OUT, `${name}.floor.mjs`);
    writeFileSync(floor, `${sdkImports.map((path, i) => `import * as m${i} from ${JSON.stringify(path)};`).join('\n')}\nglobalThis.floor = [${sdkImports.map((_, i) => `m${i}`).join(', ')}];\n`);
    const measured = importTime(file);
    const floorMs = importTime(floor);
    const ratio = measured / floorMs;
    if (ratio > AIM) missed.push(name);
    console.log(`| ${name} | ${(statSync(file).size / 1024).toFixed(0)} | ${sdkImports.join(', ')} | ${measured.toFixed(1)} | ${floorMs.toFixed(1)} | ${ratio.toFixed(2)}x |`);
  }
  console.log(missed.length ? `aim "at most ${AIM}x the floor": missed by ${missed.join(', ')}` : `aim "at most ${AIM}x the floor": met by every function`);
  rmSync(OUT, { recursive: true, force: true });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
