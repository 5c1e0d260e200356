import { spawn } from 'node:child_process';
import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { startTestService, type TestService } from '../support/local-service';

/**
 * README and docs/ show commands; this suite holds them to it. A shell block whose fence says
 * `sh runnable` is run with bash, in document order, against one fresh local service, the way a
 * reader pastes it into a terminal at the project root while `npm start` runs: `.local/` is that
 * service's data folder, so `.local/demo.json`, `npm run ops` and `npm run demo` find it. Every
 * block runs under `set -euo pipefail`, with `curl` failing on an HTTP error status (and showing
 * the body), and sees the shell variables and functions the blocks before it in the same
 * document defined. A shell block without the marker must need something this suite cannot
 * give it (an AWS account, a second long-running process, ...), and {@link NOT_RUNNABLE} must
 * recognize what: a block left unmarked by mistake fails here.
 */

const ROOT = join(__dirname, '../..');

/** README first, then docs/ by name: the order a reader meets them, and the order blocks run in. */
const DOCUMENTS = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).sort().map((name) => `docs/${name}`)];

/** What a shell block the suite cannot run needs instead; each unmarked shell block matches one. */
const NOT_RUNNABLE: readonly { needs: string; pattern: RegExp }[] = [
  { needs: 'an AWS account', pattern: /--aws\b|\bcdk (deploy|bootstrap)\b|\baws kms\b/ },
  { needs: 'the CDK CLI synthesizing the stack (.ci/run and test/lib run it)', pattern: /\bcdk synth\b/ },
  { needs: 'the local service started in another terminal', pattern: /\bnpm start\b/ },
  { needs: "the demo's identity provider kept running (npm run demo -- --serve)", pattern: /--serve\b|\$IDP\b/ },
  { needs: "a workload's identity token", pattern: /\$IDP_JWT\b|ACTIONS_ID_TOKEN|\/var\/run\/secrets\// },
  { needs: 'a Kubernetes cluster', pattern: /\bkubectl\b/ },
  { needs: "the reader's own project (test/lambdas/openapi/generated-client.test.ts covers it)", pattern: /\bnpm install openapi-fetch\b/ },
  { needs: 'minutes of measuring', pattern: /\bnpm run bench\b/ },
];

const RUNNABLE_MARKER = 'runnable';
const SHELL_LANGUAGES = new Set(['sh', 'bash', 'shell']);

interface CodeBlock {
  document: string;
  /** 1-based line of the opening fence. */
  line: number;
  language: string;
  runnable: boolean;
  text: string;
}

/** The fenced code blocks of a Markdown document (CommonMark fences: ``` or ~~~, closed by at least as many). */
function codeBlocks(document: string): CodeBlock[] {
  const lines = readDocument(document).split('\n');
  const blocks: CodeBlock[] = [];
  let open: { fence: string; line: number; info: string[]; body: string[] } | undefined;
  lines.forEach((line, index) => {
    if (!open) {
      const start = /^ {0,3}(`{3,}|~{3,})\s*([^`]*)$/.exec(line);
      if (start) open = { fence: start[1]!, line: index + 1, info: start[2]!.trim().split(/\s+/).filter(Boolean), body: [] };
      return;
    }
    const end = /^ {0,3}(`{3,}|~{3,})\s*$/.exec(line);
    if (end && end[1]![0] === open.fence[0] && end[1]!.length >= open.fence.length) {
      blocks.push({ document, line: open.line, language: open.info[0] ?? '', runnable: open.info.slice(1).includes(RUNNABLE_MARKER), text: open.body.join('\n') });
      open = undefined;
      return;
    }
    open.body.push(line);
  });
  if (open) throw new Error(`${document}:${open.line}: a code block is never closed`);
  return blocks;
}

/** The document's lines outside code blocks, with inline code spans blanked, numbered from 1. */
function proseLines(document: string): { line: number; text: string }[] {
  const inBlock = new Set<number>();
  for (const block of codeBlocks(document)) {
    const length = block.text === '' ? 0 : block.text.split('\n').length;
    for (let line = block.line; line <= block.line + length + 1; line++) inBlock.add(line);
  }
  return readDocument(document)
    .split('\n')
    .map((text, index) => ({ line: index + 1, text: text.replace(/`[^`]*`/g, (span) => ' '.repeat(span.length)) }))
    .filter(({ line }) => !inBlock.has(line));
}

/** Relative link and image targets: `[text](target)` and `![alt](target)`. */
function relativeLinks(document: string): { line: number; target: string }[] {
  return proseLines(document).flatMap(({ line, text }) =>
    [...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)]
      .map((match) => match[1]!)
      .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target))
      .map((target) => ({ line, target })),
  );
}

/** GitHub's heading anchors (github-slugger): lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchors(document: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const { text } of proseLinesKeepingCode(document)) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(text);
    if (!heading) continue;
    const plain = heading[1]!.replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1');
    const slug = plain.toLowerCase().replace(/[^\p{L}\p{N}\p{M} _-]/gu, '').replace(/ /g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    result.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return result;
}

/** Like {@link proseLines}, but inline code kept: a heading's anchor includes the text of its code spans. */
function proseLinesKeepingCode(document: string): { line: number; text: string }[] {
  const all = readDocument(document).split('\n');
  return proseLines(document).map(({ line }) => ({ line, text: all[line - 1]! }));
}

/** Where a relative link leads, as a path from the repository root, and the heading it names. */
function resolveLink(document: string, target: string): { path: string; anchor: string | null } {
  const [path, anchor] = target.split('#', 2) as [string, string | undefined];
  return { path: path === '' ? document : posix.normalize(posix.join(posix.dirname(document), decodeURI(path))), anchor: anchor ?? null };
}

/** Top-level folders of the repository whose files the documents cite by path. */
const SOURCE_FOLDERS = /^(\.ci|bench|bin|data|docs|lambdas|lib|local|ops|scripts|test|web)\//;

/** Paths into the repository that the prose cites in code spans, e.g. `lambdas/routes.ts`. */
function citedPaths(document: string): { line: number; path: string }[] {
  const all = readDocument(document).split('\n');
  return proseLines(document).flatMap(({ line }) =>
    [...all[line - 1]!.matchAll(/`([^`\s]+)`/g)]
      .map((match) => match[1]!)
      // Placeholders (`<instance>`, `{id}`, `*`) name no one file.
      .filter((path) => SOURCE_FOLDERS.test(path) && !/[<>{}*…]/.test(path))
      .map((path) => ({ line, path: path.replace(/\/$/, '') })),
  );
}

function readDocument(document: string): string {
  return readFileSync(join(ROOT, document), 'utf8');
}

const where = (block: CodeBlock) => `${block.document}:${block.line}`;

/** The project as a reader has it, with `.local` pointing at the test service's data folder. */
function projectView(dataDir: string): string {
  const view = mkdtempSync(join(tmpdir(), 'modelgate-docs-'));
  for (const entry of readdirSync(ROOT)) {
    if (entry !== '.local') symlinkSync(join(ROOT, entry), join(view, entry));
  }
  symlinkSync(dataDir, join(view, '.local'), 'dir');
  return view;
}

/** Removes the view: its links first, so nothing is ever removed through one. */
function removeProjectView(view: string): void {
  for (const entry of readdirSync(view)) {
    const path = join(view, entry);
    if (lstatSync(path).isSymbolicLink()) unlinkSync(path);
  }
  rmSync(view, { recursive: true, force: true });
}

/**
 * Run before each block: fail on the first error, unset variable or failed pipe stage; curl fails
 * on an HTTP error status and shows the body; the state the earlier blocks left is restored.
 */
const PRELUDE = `set -euo pipefail
curl() { command curl --silent --show-error --fail-with-body "$@"; }
__mg_baseline=" $(compgen -v | tr '\\n' ' ') "
source "$MODELGATE_DOCS_STATE"
`;

/** Run after a block that succeeded: what it defined (variables, functions) is kept for the next one. */
const EPILOGUE = `
{
  for __mg_name in $(compgen -v); do
    case "$__mg_name" in __mg_*|BASH_*|FUNCNAME|PIPESTATUS|_) continue ;; esac
    case "$__mg_baseline" in *" $__mg_name "*) continue ;; esac
    declare -p "$__mg_name"
  done
  for __mg_name in $(compgen -A function); do
    case "$__mg_name" in __mg_*|curl) continue ;; esac
    declare -f "$__mg_name"
  done
} > "$MODELGATE_DOCS_STATE.next"
mv "$MODELGATE_DOCS_STATE.next" "$MODELGATE_DOCS_STATE"
`;

/** Settings of the test run that would point a reader's commands elsewhere than the local service. */
const FOREIGN_ENVIRONMENT = /^(npm_.*|PORT|MODELGATE_.*|KEYS_TABLE|MODELS_TABLE|POLICIES_TABLE|USAGE_TABLE|RATE_COUNTERS_TABLE|AWS_PROFILE|AWS_REGION|INFERENCE_UPSTREAMS|CDK_.*)$/;

const OUTPUT_KEPT = 6000;
const BLOCK_TIMEOUT_MS = 120_000;

async function runBlock(block: CodeBlock, cwd: string, state: string): Promise<{ status: number | null; output: string }> {
  const env: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => !FOREIGN_ENVIRONMENT.test(name)));
  env.MODELGATE_DOCS_STATE = state;
  env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', `${PRELUDE}${block.text}\n${EPILOGUE}`], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString('utf8')).slice(-OUTPUT_KEPT);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const timer = setTimeout(() => child.kill('SIGKILL'), BLOCK_TIMEOUT_MS);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, output });
    });
  });
}

const ALL_BLOCKS = DOCUMENTS.flatMap(codeBlocks);
const SHELL_BLOCKS = ALL_BLOCKS.filter((block) => SHELL_LANGUAGES.has(block.language));
const UNMARKED = SHELL_BLOCKS.filter((block) => !block.runnable);

describe('README and docs/', () => {
  describe.each(DOCUMENTS)('%s', (document) => {
    it('links only to files that exist, and to headings that exist', () => {
      const broken = relativeLinks(document).filter(({ target }) => {
        const { path, anchor } = resolveLink(document, target);
        if (!existsSync(join(ROOT, path))) return true;
        return anchor !== null && path.endsWith('.md') && !anchors(path).has(anchor);
      });
      expect(broken.map(({ line, target }) => `${document}:${line} ${target}`)).toEqual([]);
    });

    it('cites only source files and folders that exist', () => {
      const missing = citedPaths(document).filter(({ path }) => !existsSync(join(ROOT, path)));
      expect(missing.map(({ line, path }) => `${document}:${line} ${path}`)).toEqual([]);
    });
  });

  it('keeps README a front door: at most 250 lines, the reference in docs/', () => {
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n').length - 1).toBeLessThanOrEqual(250);
  });

  it('every page under docs/ is linked from README', () => {
    const linked = new Set(relativeLinks('README.md').map(({ target }) => resolveLink('README.md', target).path));
    expect(DOCUMENTS.filter((document) => document.startsWith('docs/') && !linked.has(document))).toEqual([]);
  });

  it('marks only shell blocks runnable', () => {
    expect(ALL_BLOCKS.filter((block) => block.runnable && block.language !== 'sh').map(where)).toEqual([]);
  });

  it.each(UNMARKED.map((block) => [where(block), block] as const))('%s is not runnable here, and needs something the suite cannot give', (_where, block) => {
    expect(NOT_RUNNABLE.filter(({ pattern }) => pattern.test(block.text)).map(({ needs }) => needs)).not.toEqual([]);
  });

  describe('runnable blocks, in document order, against one local service', () => {
    let service: TestService;
    let view: string;
    let stateDir: string;

    beforeAll(async () => {
      service = await startTestService();
      view = projectView(service.dataDir);
      stateDir = mkdtempSync(join(tmpdir(), 'modelgate-docs-state-'));
    });
    afterAll(async () => {
      if (view) removeProjectView(view);
      if (stateDir) rmSync(stateDir, { recursive: true, force: true });
      await service?.stop();
    });

    const documentsWithBlocks = DOCUMENTS.filter((document) => SHELL_BLOCKS.some((block) => block.document === document && block.runnable));
    describe.each(documentsWithBlocks)('%s', (document) => {
      const state = () => join(stateDir, `${document.replace(/\W/g, '_')}.sh`);
      // Each document starts from a fresh shell: a reader may open any page first.
      beforeAll(() => writeFileSync(state(), ''));

      const blocks = SHELL_BLOCKS.filter((block) => block.document === document && block.runnable);
      it.each(blocks.map((block) => [where(block), block] as const))(
        'the block at %s runs',
        async (_where, block) => {
          const { status, output } = await runBlock(block, view, state());
          expect({ block: where(block), status, output: status === 0 ? '' : output }).toEqual({ block: where(block), status: 0, output: '' });
        },
        BLOCK_TIMEOUT_MS + 10_000,
      );
    });
  });
});
