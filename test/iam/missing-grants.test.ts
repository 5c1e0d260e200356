import { randomUUID } from 'node:crypto';
import { hashApiKey } from '../../lambdas/accounts/api-keys';
import { DynamoFederationStore } from '../../lambdas/aws/dynamo-federation-store';
import { TABLE_SCHEMAS } from '../../lambdas/aws/table-schemas';
import { readDevCertificateAuthority } from '../../local/dev-ca';
import { connectToRuntime, type RuntimeStores } from '../support/accounts';
import { makeIssuer, makePolicy } from '../support/federation-fixtures';
import { startIdentityProvider, type TestIdentityProvider } from '../support/identity-provider';
import { startTestService, type TestService } from '../support/local-service';
import type { PolicyStatement } from '../support/iam/stack-policies';
import { loadStack } from '../support/iam/stack-template';
import { actionsOf, withoutRoleStatements } from '../support/iam/template-edits';
import { exchangeForm } from '../../local/exchange-form';

const POLICIES_TABLE = 'arn:aws:dynamodb:us-east-1:123456789012:table/modelgate-policies';
const KEYS_TABLE = 'arn:aws:dynamodb:us-east-1:123456789012:table/modelgate-keys';
const SUBJECT = 'repo:acme/app:ref:refs/heads/main';
const AUDIENCE = 'https://modelgate.example';

/** Does the statement grant `action` on the table whose logical id starts with `tableLogicalIdPrefix`? */
const grants = (action: string, tableLogicalIdPrefix: string) => (statement: PolicyStatement) =>
  actionsOf(statement).includes(action) && JSON.stringify(statement.Resource).includes(tableLogicalIdPrefix);

/** Error lines of the handlers would only repeat the denials the tests assert. */
const quiet = { log: () => undefined };

/**
 * The gate bites: with one grant taken out of the synthesized template, the request that needs
 * it fails through the real local runtime with DynamoDB's AccessDeniedException, and the
 * function answers what it would answer in AWS.
 */
describe('a function whose role lacks a grant it uses', () => {
  describe('the token exchange without PutItem on EVENT# and JTI# items of the policies table', () => {
    let service: TestService;
    let stores: RuntimeStores;
    let idp: TestIdentityProvider;
    let policyId: string;
    let denied: string;

    beforeAll(async () => {
      const stack = withoutRoleStatements(loadStack(), 'TokenExchange', grants('dynamodb:PutItem', 'TablesPoliciesTable'));
      service = await startTestService({ ...quiet, iam: { stack, expectDenials: true } });
      stores = connectToRuntime(service.runtime);
      idp = await startIdentityProvider({ ca: readDevCertificateAuthority(service.runtime.dataDir) });
      // Test set-up writes as the operator: not gated.
      const federation = new DynamoFederationStore(stores.documentClient, TABLE_SCHEMAS.policies.localName);
      const organizationId = service.runtime.demo.organizationId;
      const issuer = makeIssuer({ organizationId, issuerUrl: idp.issuerUrl });
      await federation.createIssuer(issuer);
      const policy = makePolicy({ organizationId, issuerId: issuer.id, subject: SUBJECT, audience: AUDIENCE, apiKeyHash: hashApiKey(service.runtime.demo.keys.workspace) });
      await federation.createPolicy(policy);
      policyId = policy.id;
      denied = `User: ${service.iam.principal('TokenExchange')!.sessionArn} is not authorized to perform: dynamodb:PutItem on resource: ${POLICIES_TABLE} because no identity-based policy allows the dynamodb:PutItem action`;
    });
    afterAll(async () => {
      await idp?.close();
      stores?.destroy();
      await service?.stop();
    });
    beforeEach(() => {
      service.iam.denials.length = 0;
    });

    const exchange = (audience: string) =>
      service.call('/oauth/token', {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(exchangeForm(idp.sign({ sub: SUBJECT, aud: audience, jti: randomUUID() }), policyId)).toString(),
      });

    it('withholds the token (503): an issued token always has its event', async () => {
      const response = await exchange(AUDIENCE);

      const requestId = response.headers.get('x-request-id');
      expect([response.status, response.headers.get('retry-after'), response.body]).toEqual([
        503,
        '1',
        { error: 'temporarily_unavailable', error_description: `The access token could not be issued; retry shortly (request id ${requestId})` },
      ]);
      expect(service.iam.denials).toEqual([{ fn: 'TokenExchange', action: 'dynamodb:PutItem', resource: POLICIES_TABLE, message: denied }]);
    });

    it('still refuses a bad subject token (400), and the denied event write it swallowed is caught by the gate', async () => {
      const response = await exchange('https://another.example');

      expect([response.status, response.body.error]).toEqual([400, 'invalid_grant']);
      expect(service.iam.denials).toEqual([{ fn: 'TokenExchange', action: 'dynamodb:PutItem', resource: POLICIES_TABLE, message: denied }]);
    });
  });

  it('answers 500 when the catalog function may not read the keys table it authenticates callers against', async () => {
    const stack = withoutRoleStatements(loadStack(), 'Catalog', grants('dynamodb:GetItem', 'TablesKeysTable'));
    const service = await startTestService({ ...quiet, iam: { stack, expectDenials: true } });
    try {
      const response = await service.call('/models/user', { key: service.runtime.demo.keys.workspace });

      expect([response.status, response.body]).toEqual([500, { error: { code: 500, message: 'Internal Server Error' } }]);
      const session = service.iam.principal('Catalog')!.sessionArn;
      expect(service.iam.denials).toEqual([
        {
          fn: 'Catalog',
          // Authentication reads the key, its organization and workspace in one BatchGetItem.
          action: 'dynamodb:BatchGetItem',
          resource: KEYS_TABLE,
          message: `User: ${session} is not authorized to perform: dynamodb:BatchGetItem on resource: ${KEYS_TABLE} because no identity-based policy allows the dynamodb:BatchGetItem action`,
        },
      ]);
    } finally {
      await service.stop();
    }
  });

  it('fails the suite at stop on a denial the test did not expect', async () => {
    const stack = withoutRoleStatements(loadStack(), 'Catalog', grants('dynamodb:GetItem', 'TablesKeysTable'));
    const service = await startTestService({ ...quiet, iam: { stack } });
    await service.call('/models/user', { key: service.runtime.demo.keys.workspace });
    await expect(service.stop()).rejects.toThrow(
      `AWS requests the stack's IAM policies deny:\nUser: ${service.iam.principal('Catalog')!.sessionArn} is not authorized to perform: dynamodb:BatchGetItem on resource: ${KEYS_TABLE} because no identity-based policy allows the dynamodb:BatchGetItem action`,
    );
  });
});
