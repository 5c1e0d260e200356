// The checks `npm test` runs before jest: the type check of the sources and of the settings
// page, then ESLint. Each is single-threaded, so the type checks and ESLint run side by side, one
// core each; their output is printed whole, one check after the other, and any failure fails the run.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name) => join(root, 'node_modules', '.bin', name);

/** Runs `commands` one after the other; resolves with their joint output and the first failure's exit code (0 for none). */
function lane(commands) {
  return commands.reduce(
    (previous, [command, ...args]) =>
      previous.then((done) => {
        if (done.code !== 0) return done;
        return new Promise((resolve) => {
          const child = spawn(bin(command), args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
          let output = `> ${command} ${args.join(' ')}\n`;
          child.stdout.on('data', (chunk) => (output += chunk));
          child.stderr.on('data', (chunk) => (output += chunk));
          child.on('error', (error) => resolve({ output: done.output + output + `${error.message}\n`, code: 1 }));
          child.on('close', (code, signal) => resolve({ output: done.output + output, code: code ?? (signal ? 1 : 0) }));
        });
      }),
    Promise.resolve({ output: '', code: 0 }),
  );
}

const lanes = await Promise.all([
  lane([
    ['tsc', '-p', '.'],
    ['tsc', '-p', 'web'],
  ]),
  lane([['eslint']]),
]);
for (const { output } of lanes) process.stdout.write(output);
process.exitCode = lanes.find(({ code }) => code !== 0)?.code ?? 0;
