import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { OPENAPI_DOCUMENT } from '../../../lambdas/document/document';
import { closed } from '../../support/openapi-responses';

const ROOT = join(__dirname, '..', '..', '..');
type Json = Record<string, any>;

/** Every `example` of the document, where it is, with the schema it illustrates. */
function examples(node: unknown, pointer = '#'): { pointer: string; schema: Json; example: unknown }[] {
  if (Array.isArray(node)) return node.flatMap((item, i) => examples(item, `${pointer}/${i}`));
  if (!node || typeof node !== 'object') return [];
  const found = Object.entries(node as Json)
    .filter(([keyword]) => !['example', 'examples', 'enum', 'const', 'default'].includes(keyword))
    .flatMap(([keyword, value]) => examples(value, `${pointer}/${keyword}`));
  const { example, ...schema } = node as Json;
  // A schema's example (a parameter's or a media type's would sit beside `schema`).
  return 'example' in (node as Json) && ('type' in schema || '$ref' in schema || 'properties' in schema) ? [{ pointer, schema, example }, ...found] : found;
}

/**
 * The served document, held to what its readers check: every example fits its schema, as the
 * suites hold answers to them (no member a schema does not describe), and `@redocly/cli lint`
 * passes with its recommended rules (redocly.yaml says which one is off, and why).
 */
describe('the OpenAPI document, as linters read it', () => {
  it('has examples that all fit their schemas, the public schemas modelgate changes included', () => {
    const ajv = new Ajv2020({ strict: false, allowUnionTypes: true, allErrors: true });
    addFormats(ajv);
    const components = closed(OPENAPI_DOCUMENT.components);
    const all = examples(OPENAPI_DOCUMENT);
    expect(all.length).toBeGreaterThan(100);
    const failures = all.flatMap(({ pointer, schema, example }) => {
      const validate = ajv.compile({ ...(closed(schema) as Json), components });
      return validate(example) ? [] : [`${pointer}: ${ajv.errorsText(validate.errors)}`];
    });
    expect(failures).toEqual([]);
    // The adapted guardrail's example lost what modelgate refuses, and kept its budget.
    const guardrails = JSON.stringify((OPENAPI_DOCUMENT.components as Json).schemas.ListGuardrailsResponse.example);
    expect(guardrails).not.toContain('content_filters');
    expect(guardrails).toContain('"limit_usd":100');
  });

  it('keeps only the components its operations use, and the stream chunk', () => {
    const text = JSON.stringify({ ...OPENAPI_DOCUMENT, components: { ...(OPENAPI_DOCUMENT.components as Json), schemas: undefined } });
    const schemas = (OPENAPI_DOCUMENT.components as Json).schemas as Json;
    const referenced = new Set([...JSON.stringify([text, schemas]).matchAll(/#\/components\/schemas\/([A-Za-z0-9_]+)/g)].map((match) => match[1]));
    expect(Object.keys(schemas).filter((name) => !referenced.has(name))).toEqual(['ChatStreamChunk']);
  });

  it('has a license and a 4xx answer on every operation', () => {
    expect((OPENAPI_DOCUMENT.info as Json).license).toEqual({ name: 'Apache-2.0', identifier: 'Apache-2.0' });
    for (const [path, operations] of Object.entries(OPENAPI_DOCUMENT.paths as Json)) {
      for (const [method, operation] of Object.entries(operations as Json)) {
        expect([method, path, Object.keys((operation as Json).responses).some((status) => status.startsWith('4'))]).toEqual([method, path, true]);
      }
    }
  });

  it('passes @redocly/cli lint with the recommended rules, no warning left', () => {
    const dir = mkdtempSync(join(tmpdir(), 'modelgate-lint-'));
    try {
      const file = join(dir, 'openapi.json');
      writeFileSync(file, JSON.stringify(OPENAPI_DOCUMENT));
      const cli = require.resolve('@redocly/cli/bin/cli.js');
      const run = spawnSync(process.execPath, [cli, 'lint', '--config', join(ROOT, 'redocly.yaml'), '--format', 'json', file], {
        cwd: dir,
        encoding: 'utf8',
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
        timeout: 120_000,
      });
      const report = JSON.parse(run.stdout.slice(run.stdout.indexOf('{'))) as { totals: Json; problems: { ruleId: string; message: string }[] };
      expect(report.problems.map(({ ruleId, message }) => `${ruleId}: ${message}`)).toEqual([]);
      expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
      expect(run.status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
