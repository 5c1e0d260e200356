/**
 * The operator CLI: `npm run ops -- <command>`. This file only wires the process to
 * {@link runOps}: arguments, stdout/stderr, the target, the exit status.
 */
import { quietSdkNodeNotice } from '../local/sdk-node-notice';
import { runOps } from './run';
import { connectTarget } from './target';

quietSdkNodeNotice();
runOps(
  process.argv.slice(2),
  { out: (text) => process.stdout.write(`${text}\n`), err: (text) => process.stderr.write(`${text}\n`) },
  (flags) => connectTarget(flags),
).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
