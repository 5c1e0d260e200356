import { ISSUERS, POLICIES, badRequest, useWorkloadIdentityAdmin } from '../../support/workload-identity-admin';

describe('workload identity admin API on the local service', () => {
  const api = useWorkloadIdentityAdmin();
  const { post, patch, remove, createIssuer, policyBody, createPolicy } = api;

  describe('policies', () => {
    describe('on a multi-tenant issuer', () => {
      it.each([
        ['https://token.actions.githubusercontent.com', 'GitHub Actions'],
        ['https://gitlab.com', 'GitLab'],
        ['https://agent.buildkite.com', 'Buildkite'],
        ['https://app.terraform.io', 'Terraform Cloud'],
        ['https://accounts.google.com', 'Google'],
      ])('%s: refuses a policy whose condition does not pin subject when no subject is set', async (url, provider) => {
        const shared = await createIssuer({ issuer_url: url });
        const response = await post(POLICIES, policyBody(shared.id, { subject: null, condition: '"deploy" in scopes' }));
        expect([response.status, response.body]).toEqual([
          400,
          badRequest(
            `Invalid condition: ${url} issues tokens to every ${provider} customer, so without an exact subject the condition must pin it: ` +
              'one clause joined by && must compare subject with a literal, require it to be in a list of literals, or test it with startsWith ' +
              'against a literal that names an owner, for example subject.startsWith("repo:acme/") or subject == "repo:acme/app:ref:refs/heads/main"',
            'condition',
          ),
        ]);
        await createPolicy(shared.id, { subject: null, condition: 'subject.startsWith("repo:acme/") && "deploy" in scopes' });
        await createPolicy(shared.id, { subject: 'acme/api', condition: '"deploy" in scopes' });
        expect((await remove(`${ISSUERS}/${shared.id}`)).status).toBe(200);
      });

      it.each([
        ['reads subject without constraining it', 'subject.size() >= 0'],
        ['compares subject with itself', 'subject == subject'],
        ['pins it only on one side of ||', 'true || subject == "x"'],
        ['tests a prefix that names no owner', 'subject.startsWith("repo:")'],
        ['tests a prefix an owner\'s lookalike also has', 'subject.startsWith("repo:acme")'],
        ['pins it inside a negation', '!(subject != "repo:acme/api:ref:refs/heads/main")'],
        ['tests a list that is not all literals', 'subject in ["repo:acme/api:ref:refs/heads/main", token_type]'],
      ])('refuses a condition that %s', async (_name, condition) => {
        const shared = await createIssuer({ issuer_url: 'https://token.actions.githubusercontent.com' });
        const response = await post(POLICIES, policyBody(shared.id, { subject: null, condition }));
        expect(response.status).toBe(400);
        expect(response.body.error.message).toMatch(/must pin it: .* for example subject\.startsWith\("repo:acme\/"\)/);
        await remove(`${ISSUERS}/${shared.id}`);
      });

      it.each([
        ['an exact subject', 'subject == "repo:acme/api:ref:refs/heads/main" && "deploy" in scopes'],
        ['a literal on the left', '"repo:acme/api:ref:refs/heads/main" == subject'],
        ['a list of literals', 'subject in ["repo:acme/api:ref:refs/heads/main", "repo:acme/web:ref:refs/heads/main"]'],
        ['an owner prefix among other clauses', 'token_type == "" && subject.startsWith("repo:acme/") && subject.endsWith(":ref:refs/heads/main")'],
        ['a group prefix', 'subject.startsWith("project_path:acme/")'],
      ])('accepts %s', async (_name, condition) => {
        const shared = await createIssuer({ issuer_url: 'https://token.actions.githubusercontent.com' });
        await createPolicy(shared.id, { subject: null, condition });
        await remove(`${ISSUERS}/${shared.id}`);
      });

      it('applies the rule to updates: removing the subject of such a policy is refused', async () => {
        const shared = await createIssuer({ issuer_url: 'https://token.actions.githubusercontent.com' });
        const policy = await createPolicy(shared.id, { subject: 'repo:acme/api:ref:refs/heads/main', condition: 'token_type == ""' });
        const response = await patch(`${POLICIES}/${policy.id}`, { subject: null });
        expect(response.status).toBe(400);
        expect(response.body.error.metadata).toEqual({ parameter: 'condition' });
        await remove(`${ISSUERS}/${shared.id}`);
      });

      it('refuses moving an issuer onto a multi-tenant URL while one of its policies would let every tenant in', async () => {
        const own = await createIssuer();
        const policy = await createPolicy(own.id, { subject: null, condition: '"deploy" in scopes' });
        const response = await patch(`${ISSUERS}/${own.id}`, { issuer_url: 'https://gitlab.com' });
        expect([response.status, response.body]).toEqual([
          400,
          badRequest(
            `Invalid issuer_url: policy ${policy.id} has no subject and its condition does not pin subject, which https://gitlab.com requires: change the policy first`,
            'issuer_url',
          ),
        ]);
      });
    });
  });
});
