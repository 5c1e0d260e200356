import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { requestValidatorSources } from '../../scripts/compile-request-schemas';

const GENERATED = join(__dirname, '../../lambdas/openapi/request-validators.generated');

describe('the compiled request validators', () => {
  const { js, dts } = requestValidatorSources();

  it('are committed as the script writes them from the OpenAPI document: run `npx tsx scripts/compile-request-schemas.ts` after changing a request schema', () => {
    expect(readFileSync(`${GENERATED}.js`, 'utf8') === js).toBe(true);
    expect(readFileSync(`${GENERATED}.d.ts`, 'utf8') === dts).toBe(true);
  });

  it('load nothing at run time: no validator library, no helper module', () => {
    expect(js).not.toMatch(/\brequire\(|^import /m);
  });
});
