import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { OPENAPI_DOCUMENT } from '../../lambdas/document/document';
import { OPENAPI_BODY } from '../../lambdas/openapi/document-body.generated';
import { DOCUMENT_OUTPUT, OUTPUT, documentBodySources, requestValidatorSources } from '../../scripts/compile-request-schemas';

describe('the compiled request validators', () => {
  const files = requestValidatorSources();

  it('are committed as the script writes them from the OpenAPI document: run `npx tsx scripts/compile-request-schemas.ts` after changing a request schema', () => {
    expect(readdirSync(OUTPUT).sort()).toEqual(Object.keys(files).sort());
    for (const [name, source] of Object.entries(files)) expect([name, readFileSync(join(OUTPUT, name), 'utf8') === source]).toEqual([name, true]);
  });

  it('load nothing at run time: no validator library, no helper module', () => {
    for (const [name, source] of Object.entries(files)) expect([name, /\brequire\(|^import /m.test(name.endsWith('.js') ? source : '')]).toEqual([name, false]);
  });

  it('give each function the validators of its own routes only', () => {
    expect(Object.keys(files).filter((name) => name.endsWith('.js')).sort()).toEqual(['catalog.generated.js', 'inference.generated.js', 'management.generated.js']);
    expect(files['catalog.generated.js']).toContain('export const getUserModelsQuery');
    expect(files['catalog.generated.js']).not.toContain('createKeyBody');
  });

  it('are committed with the served OpenAPI document, which is the document built from the routes, serialized', () => {
    for (const [name, source] of Object.entries(documentBodySources())) expect([name, readFileSync(join(DOCUMENT_OUTPUT, name), 'utf8') === source]).toEqual([name, true]);
    expect(JSON.parse(OPENAPI_BODY)).toEqual(OPENAPI_DOCUMENT);
  });
});
