import { DomainError } from '../../../lambdas/errors';
import { queryValues, validated, type RequestValidator } from '../../../lambdas/openapi/request-validation';
import * as catalog from '../../../lambdas/openapi/validators/catalog.generated';
import * as inference from '../../../lambdas/openapi/validators/inference.generated';
import * as management from '../../../lambdas/openapi/validators/management.generated';
import { ROUTES } from '../../../lambdas/routes';

/** The refusal, in the common error body (docs/reference.md#the-common-error-body), of a value, as `Invalid <parameter>: <reason>` and its parameter; `accepted` when valid. */
function refusal(validate: RequestValidator<unknown>, value: unknown): string {
  try {
    validated(validate, value);
    return 'accepted';
  } catch (error) {
    if (!(error instanceof DomainError) || error.kind !== 'invalid_input') throw error;
    expect(error.message.startsWith(`Invalid ${(error.metadata as { parameter: string }).parameter}: `)).toBe(true);
    return error.message;
  }
}

const queryValidators: Record<string, RequestValidator<unknown>> = { ...management.queryValidators, ...catalog.queryValidators };
/** A query string's refusal, or `accepted`; a value in a list is a parameter given more than once. */
const query = (operationId: keyof management.RequestQueries | keyof catalog.RequestQueries, raw: Readonly<Record<string, string | readonly string[]>>) => {
  const multiValueQueryStringParameters = Object.fromEntries(Object.entries(raw).map(([name, value]) => [name, [value].flat()]));
  const parameters = ROUTES.find((route) => route.operationId === operationId)!.query!;
  try {
    return refusal(queryValidators[operationId]!, queryValues({ multiValueQueryStringParameters }, parameters));
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    return error.message;
  }
};

const HASH = 'a'.repeat(64);

describe('request bodies, refused by their schemas in docs/reference.md#the-common-error-body words', () => {
  it.each([
    ['a missing field', management.createKeyBody, {}, 'Invalid name: is required'],
    ['an unknown field, named before a missing one', management.createKeyBody, { colour: 'red' }, 'Invalid colour: is not a known field'],
    ['a blank string', management.createKeyBody, { name: '   ' }, 'Invalid name: must be a non-empty string'],
    ['a value outside an enumeration', management.createKeyBody, { name: 'a', kind: 'root' }, 'Invalid kind: must be one of workspace, management, personal'],
    ['an id of the wrong shape', management.createKeyBody, { name: 'a', workspace_id: 'W' }, 'Invalid workspace_id: must be a lowercase UUID'],
    ['an empty update of a key, naming what it may carry', management.updateKeyBody, {}, 'Invalid body: give at least one of disabled, include_byok_in_limit, limit, limit_reset, name'],
    ['a key limit out of range', management.createKeyBody, { name: 'a', limit: 1e308 }, 'Invalid limit: must be a number from 0 to 1000000000, or null'],
    ['a negative key limit', management.updateKeyBody, { limit: -1 }, 'Invalid limit: must be a number from 0 to 1000000000, or null'],
    ['a key limit given as text', management.updateKeyBody, { limit: '1'.repeat(10_000) }, 'Invalid limit: must be a number from 0 to 1000000000, or null'],
    ['an unknown reset interval', management.updateKeyBody, { limit_reset: 'yearly' }, 'Invalid limit_reset: must be one of daily, weekly, monthly'],
    ['a guardrail budget of 0', management.createGuardrailBody, { name: 'g', limit_usd: 0, reset_interval: 'daily' }, 'Invalid limit_usd: must be a number greater than 0 and at most 1000000000, or null'],
    ['a workspace budget of -0', management.upsertWorkspaceBudgetBody, { limit_usd: -0 }, 'Invalid limit_usd: must be a number greater than 0 and at most 1000000000'],
    ['a workspace budget without its amount', management.upsertWorkspaceBudgetBody, { include_byok_in_budgets: true }, 'Invalid limit_usd: is required'],
    ['a null workspace budget', management.upsertWorkspaceBudgetBody, { limit_usd: null }, 'Invalid limit_usd: must be a number greater than 0 and at most 1000000000'],
    ['an empty update, naming what it may carry', management.updateIssuerBody, {}, 'Invalid body: give at least one of name, issuer_url, jwks_url, jwks, check_jti'],
    ['a flag that is not a boolean', management.updateKeyBody, { disabled: 'yes' }, 'Invalid disabled: must be a boolean'],
    ['a list item of the wrong shape, by its position', management.bulkAssignKeysToGuardrailBody, { key_hashes: [HASH, 'b'] }, 'Invalid key_hashes: item 1 must be a key hash (64 lowercase hexadecimal characters)'],
    ['too many items', management.bulkAssignKeysToGuardrailBody, { key_hashes: Array(501).fill(HASH) }, 'Invalid key_hashes: must have at most 500 items'],
    ['a blank list item', management.createGuardrailBody, { name: 'g', allowed_models: ['a', ' '] }, 'Invalid allowed_models: item 1 must be a non-empty string'],
    ['a NUL in a model name of a guardrail', management.createGuardrailBody, { name: 'g', allowed_models: ['openai/gpt-4o\u0000'] }, 'Invalid allowed_models: item 0 must not contain control characters or unpaired UTF-16 surrogates'],
    ['a string too long', management.createGuardrailBody, { name: 'x'.repeat(201) }, 'Invalid name: must be at most 200 characters'],
    ['a field set by the service', management.createIssuerBody, { id: HASH, name: 'x', issuer_url: 'https://a.example' }, 'Invalid id: is set by the service and read-only'],
    ['a control character in a name', management.createIssuerBody, { name: 'a\u0007b', issuer_url: 'https://a.example' }, 'Invalid name: must not contain control characters or unpaired UTF-16 surrogates'],
    ['the removal of a field an update cannot remove', management.updateIssuerBody, { issuer_url: null }, 'Invalid issuer_url: is required and cannot be removed'],
    ['an unknown member of a nested object', management.updateFederationPolicyBody, { claim_checks: { groups: 'x' } }, 'Invalid claim_checks: has no check "groups" (the checks are scopes and token_type)'],
    ['a nested value', management.updateFederationPolicyBody, { claim_checks: { scopes: '' } }, 'Invalid claim_checks.scopes: must be a non-empty string or null'],
    ['a bound named in the reason', management.updateFederationPolicyBody, { condition: 'x'.repeat(2001) }, 'Invalid condition: the condition is longer than 2000 characters'],
    ['a member of a list of objects', inference.createChatCompletionBody, { model: 'm', messages: [{ role: 'robot', content: 'x' }] }, 'Invalid messages[0].role: must be one of system, user, assistant, tool, developer'],
    ['a rule between two members', inference.createChatCompletionBody, { model: 'm', messages: [{ role: 'user', content: null }] }, 'Invalid messages[0].content: must be a string or an array of content parts'],
    ['an integer with a lower bound', inference.createChatCompletionBody, { model: 'm', messages: [{ role: 'user', content: 'x' }], max_tokens: 0 }, 'Invalid max_tokens: must be an integer from 1 to 9007199254740991'],
  ])('refuses %s', (_case, validate, body, message) => {
    expect(refusal(validate as RequestValidator<unknown>, body)).toBe(message);
  });

  it.each([
    ['an assistant turn without content', inference.createChatCompletionBody, { model: 'm', messages: [{ role: 'assistant', content: null }] }],
    ['unset sampling parameters', inference.createChatCompletionBody, { model: 'm', messages: [{ role: 'user', content: 'x' }], temperature: null, seed: null }],
    ['a removed subject and claim checks', management.updateFederationPolicyBody, { subject: null, claim_checks: null }],
  ])('accepts %s', (_case, validate, body) => {
    expect(refusal(validate as RequestValidator<unknown>, body)).toBe('accepted');
  });
});

describe('query strings, typed by their schemas', () => {
  it('reads digits as integers and true or false as booleans, and leaves out what no parameter declares', () => {
    const parameters = ROUTES.find((route) => route.operationId === 'listGuardrails')!.query!;
    expect(queryValues({ queryStringParameters: { offset: '2', limit: '10', workspace_id: 'w', other: 'x' } }, parameters)).toEqual({ offset: 2, limit: 10, workspace_id: 'w' });
    expect(queryValues({ queryStringParameters: { include_disabled: 'true' } }, ROUTES.find((route) => route.operationId === 'listKeys')!.query!)).toEqual({ include_disabled: true });
  });

  it('takes a null where the parameter may be null for not given', () => {
    expect(query('listWorkspaces', { offset: 'null' })).toBe('accepted');
  });

  it('reads every value of a name where API Gateway gives them, the single value otherwise', () => {
    const parameters = ROUTES.find((route) => route.operationId === 'listWorkspaces')!.query!;
    expect(() => queryValues({ queryStringParameters: { limit: '2' }, multiValueQueryStringParameters: { limit: ['1', '2'] } }, parameters)).toThrow('Invalid limit: must be given once');
    expect(queryValues({ queryStringParameters: { limit: '2' } }, parameters)).toEqual({ limit: 2 });
  });

  it.each([
    ['listWorkspaces', { offset: '-1' }, 'Invalid offset: must be an integer from 0 to 9007199254740991'],
    ['listWorkspaces', { limit: '' }, 'Invalid limit: must be an integer from 1 to 100'],
    ['listWorkspaces', { offset: '' }, 'Invalid offset: must be an integer from 0 to 9007199254740991'],
    ['listTokenExchangeEvents', { limit: '' }, 'Invalid limit: must be an integer from 1 to 100'],
    ['listWorkspaces', { offset: ['0', '50'] }, 'Invalid offset: must be given once'],
    ['listKeys', { include_disabled: ['true', 'true'] }, 'Invalid include_disabled: must be given once'],
    ['listWorkspaces', { limit: '0x10' }, 'Invalid limit: must be an integer from 1 to 100'],
    ['listWorkspaces', { limit: '99999999999999999999' }, 'Invalid limit: must be an integer from 1 to 100'],
    ['listKeys', { include_disabled: 'yes' }, 'Invalid include_disabled: must be true or false'],
    ['listKeys', { workspace_id: 'w'.repeat(1100) }, 'Invalid workspace_id: must be a lowercase UUID'],
    ['getUserActivity', { api_key_hash: 'x' }, 'Invalid api_key_hash: must be a key hash (64 lowercase hexadecimal characters)'],
    ['listTokenExchangeEvents', { cursor: '' }, 'Invalid cursor: is not a cursor this endpoint returned'],
  ] as const)('%s refuses %j', (operationId, raw, message) => {
    expect(query(operationId, raw)).toBe(message);
  });
});
