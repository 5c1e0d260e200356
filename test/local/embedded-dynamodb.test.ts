import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const ROOT = join(__dirname, '..', '..');
const QUERIES = 2000;

/**
 * The embedded DynamoDB (dynalite 4.0.0) once kept one storage iterator per Query, with the
 * buffers it held (1.4 KB of buffers each here, 9 KB of native memory each on LevelDB), so a
 * local service grew by hundreds of megabytes a day. The fix lives in the dependency, as a patch kept in `patches/`
 * that `npm install` and `npm ci` apply (patch-package, the `postinstall` script).
 */
describe('the embedded DynamoDB over many queries', () => {
  it(`keeps memory outside the heap flat across ${QUERIES.toLocaleString('en-US')} Queries`, async () => {
    // A process of its own, with garbage collection on demand, so only what stays allocated counts.
    const { stdout } = await promisify(execFile)(process.execPath, ['--expose-gc', '--import', 'tsx', 'test/support/query-memory.ts', String(QUERIES)], {
      cwd: ROOT,
      env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    });
    const grown = JSON.parse(stdout) as { external: number; arrayBuffers: number; rss: number };
    // Unpatched: 2.8 MB of buffers stay for these queries (1.4 KB each, and as much again in the
    // heap); patched, none once the collections settle.
    expect(grown.arrayBuffers).toBeLessThan(1024 * 1024);
    expect(grown.external).toBeLessThan(2 * 1024 * 1024);
  }, 120_000);
});
