/**
 * Copies the schemas modelgate reuses from the public service's OpenAPI document
 * (test/fixtures/openapi.yaml) into lambdas/openapi/public-schemas.json, verbatim:
 * the named schemas below with every schema they reference, and the inline schemas of the
 * key operations (the public document names no key schema). The schemas of a chat completion's
 * answer and stream chunks go to lambdas/openapi/completion-schemas.json, a file of their own:
 * the inference function reads them (lambdas/inference/public-answer.ts) without the rest.
 * The document test holds both copies equal to the public document.
 *
 *   npx tsx scripts/copy-public-schemas.ts
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

const ROOTS = [
  'ModelsListResponse',
  'ListEndpointsResponse',
  'ListWorkspacesResponse',
  'CreateWorkspaceRequest',
  'CreateWorkspaceResponse',
  'GetWorkspaceResponse',
  'UpdateWorkspaceRequest',
  'UpdateWorkspaceResponse',
  'DeleteWorkspaceResponse',
  'ListWorkspaceBudgetsResponse',
  'GetWorkspaceBudgetResponse',
  'UpsertWorkspaceBudgetRequest',
  'UpsertWorkspaceBudgetResponse',
  'DeleteWorkspaceBudgetResponse',
  'WorkspaceBudgetInterval',
  'ListGuardrailsResponse',
  'CreateGuardrailRequest',
  'CreateGuardrailResponse',
  'GetGuardrailResponse',
  'UpdateGuardrailRequest',
  'UpdateGuardrailResponse',
  'DeleteGuardrailResponse',
  'BulkAssignKeysRequest',
  'BulkAssignKeysResponse',
  'BulkUnassignKeysRequest',
  'BulkUnassignKeysResponse',
  'ListKeyAssignmentsResponse',
  'ActivityResponse',
  'ModelsCountResponse',
  'ModelResponse',
  'GenerationResponse',
];

/** The answer of `POST /chat/completions`, JSON and streamed. */
export const COMPLETION_ROOTS = ['ChatResult', 'ChatStreamChunk'];

/** `METHOD path part`: part is `request` or a status. */
export const INLINE = ['GET /keys 200', 'POST /keys request', 'POST /keys 201', 'GET /keys/{hash} 200', 'PATCH /keys/{hash} request', 'PATCH /keys/{hash} 200', 'DELETE /keys/{hash} 200', 'GET /key 200', 'GET /providers 200'];

type Json = Record<string, any>;
const root = join(__dirname, '..');

/** The JSON schema of one {@link INLINE} entry in the public document, verbatim. */
export function inlineSchema(source: Json, entry: string): Json {
  const [method, path, part] = entry.split(' ') as [string, string, string];
  const operation = source.paths[path][method.toLowerCase()];
  const content = part === 'request' ? operation.requestBody.content : operation.responses[part].content;
  return content['application/json'].schema;
}

/** The named schemas with every schema they reference, verbatim. */
function withReferences(document: Json, roots: readonly string[]): Json {
  const schemas: Json = {};
  const pending = [...roots];
  while (pending.length) {
    const name = pending.shift()!;
    if (name in schemas) continue;
    schemas[name] = document.components.schemas[name];
    for (const m of JSON.stringify(schemas[name]).matchAll(/"#\/components\/schemas\/([^"]+)"/g)) pending.push(m[1]!);
  }
  return schemas;
}

if (require.main === module) {
  const document = parse(readFileSync(join(root, 'test/fixtures/openapi.yaml'), 'utf8')) as Json;
  const schemas = withReferences(document, ROOTS);
  const inline = Object.fromEntries(INLINE.map((entry) => [entry, inlineSchema(document, entry)]));
  writeFileSync(join(root, 'lambdas/openapi/public-schemas.json'), `${JSON.stringify({ schemas, inline }, null, 2)}\n`);
  const completion = withReferences(document, COMPLETION_ROOTS);
  writeFileSync(join(root, 'lambdas/openapi/completion-schemas.json'), `${JSON.stringify({ schemas: completion }, null, 2)}\n`);
}
