// `npm test`: the type check of the sources and of the settings page, ESLint, and jest, side by
// side. The checks are single-threaded and jest's workers leave a core's worth of waiting for
// servers and processes, so together they finish sooner than one after the other. jest's output
// shows as it runs; each check's is printed whole when it ends. A check that fails stops jest
// and fails the run at once; otherwise the run fails when jest does. Arguments go to jest.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name) => join(root, 'node_modules', '.bin', name);

/** Runs `command` with its output collected; resolves with the output and its exit code. */
function collected([command, ...args]) {
  return new Promise((resolve) => {
    const child = spawn(bin(command), args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = `> ${[command, ...args].join(' ')}\n`;
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', (error) => resolve({ output: `${output}${error.message}\n`, code: 1 }));
    child.on('close', (code) => resolve({ output, code: code ?? 1 }));
  });
}

/** Runs `commands` one after the other, stopping at the first that fails; prints each one's output when it ends. */
async function lane(commands) {
  for (const command of commands) {
    const { output, code } = await collected(command);
    process.stdout.write(output);
    if (code !== 0) return code;
  }
  return 0;
}

// jest and its workers in a process group of their own, so that stopping it stops them all; a
// signal this process gets (Ctrl-C) is passed on to the group.
const jest = spawn(bin('jest'), ['--ci', ...process.argv.slice(2)], { cwd: root, stdio: 'inherit', detached: true });
const jestDone = new Promise((resolve) => jest.on('close', (code, signal) => resolve(code ?? (signal ? 1 : 0))));
const stopJest = (signal) => {
  try {
    process.kill(-jest.pid, signal);
  } catch {
    // Already gone.
  }
};
let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    interrupted = true;
    stopJest(signal);
  });
}
const checks = Promise.all([
  lane([
    ['tsc', '-p', '.'],
    ['tsc', '-p', 'web'],
  ]),
  lane([['eslint']]),
]).then((codes) => codes.find((code) => code !== 0) ?? 0);

const failedCheck = await checks;
if (failedCheck !== 0) {
  if (!interrupted) console.error('\nnpm test: a type check or ESLint failed (above); jest is stopped.');
  stopJest('SIGTERM');
  // Workers that do not stop on their own within 5 s are killed.
  const late = setTimeout(() => stopJest('SIGKILL'), 5000);
  await jestDone;
  clearTimeout(late);
  stopJest('SIGKILL');
  process.exitCode = failedCheck;
} else {
  process.exitCode = await jestDone;
}
