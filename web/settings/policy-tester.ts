/**
 * The policy tester (docs/reference.md#subject-tokens, docs/reference.md#conditions): a
 * workload token, and optionally its DPoP proof, judged step by step by the API.
 */
import { API_BASE, api, type TestResult } from './api';
import { append, h, replaceChildren } from './dom';
import { clearErrors, field, showError, type FormErrors } from './forms';
import { currentState } from './page-state';

const STEP_LABELS: Record<string, string> = {
  size_limits: 'Size limits (sub, aud, scopes)',
  policy_state: 'Policy state (enabled, issuer, plan, acting key)',
  signature: 'Signature, key and expiry',
  iss: 'Issuer (iss)',
  aud: 'Audience (aud)',
  sub: 'Subject (sub)',
  'claim_check:scopes': 'Claim check: scopes',
  'claim_check:token_type': 'Claim check: token_type',
  condition: 'Condition',
  dpop: 'DPoP proof (token binding)',
};
const STATUS_LABELS: Record<string, string> = { passed: 'passed', failed: 'failed', not_reached: 'not reached' };

/** Fills `select` with an option per policy, paused ones marked. */
export function policyOptions(select: HTMLSelectElement): void {
  for (const policy of currentState()!.policies) append(select, h('option', { value: policy.id }, `${policy.name}${policy.enabled ? '' : ' (paused)'}`));
}

/** The Policy tester section: policy, token and proof in, each step of the decision out. */
export function testerSection(): HTMLElement {
  const policySelect = h('select', { id: 'tester-policy', required: true });
  policyOptions(policySelect);
  const token = h('textarea', { id: 'tester-token', rows: 4, spellcheck: 'false', autocomplete: 'off', required: true, placeholder: 'eyJ…' });
  const proof = h('textarea', { id: 'tester-dpop-proof', rows: 3, spellcheck: 'false', autocomplete: 'off', placeholder: 'eyJ…' });
  const policyField = field('Policy', policySelect);
  const tokenField = field('Workload token (JWT)', token, 'Nothing is issued and nothing is recorded: the tester only says what the token endpoint would decide, and why.');
  const proofField = field(
    'DPoP proof (optional)',
    proof,
    `The DPoP proof JWT the workload would send with the exchange, made for POST to ${location.origin}${API_BASE}/oauth/token. It is checked as the exchange checks it, and not used up.`,
  );
  const general = h('p', { class: 'form-error', role: 'alert' });
  const output = h('div', { id: 'tester-result', 'aria-live': 'polite' });
  const form = h(
    'form',
    { class: 'card', id: 'tester-form', 'aria-labelledby': 'tester-title', novalidate: true },
    policyField.wrapper,
    tokenField.wrapper,
    proofField.wrapper,
    general,
    h('button', { type: 'submit', disabled: currentState()!.policies.length === 0 }, 'Run test'),
  );
  const errors: FormErrors = { fields: { subject_token: tokenField.error, dpop_proof: proofField.error }, general };
  const run = async () => {
    clearErrors(errors, form);
    replaceChildren(output);
    try {
      const body: Record<string, string> = { subject_token: token.value.trim() };
      if (proof.value.trim() !== '') body.dpop_proof = proof.value.trim();
      const { data } = await api<{ data: TestResult }>('POST', `/workload-identity/policies/${encodeURIComponent(policySelect.value)}/evaluate`, body);
      replaceChildren(output, testResult(data));
    } catch (error) {
      showError(errors, error);
    }
  };
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    // Every failure is shown in the form (run catches it): nothing is left to reject.
    void run();
  });
  return h(
    'section',
    { 'aria-labelledby': 'tester-title', id: 'tester' },
    h('h2', { id: 'tester-title' }, 'Policy tester'),
    h('p', {}, 'Paste a token from your workload to see each check the token endpoint runs, and the true reason a token is refused.'),
    form,
    output,
  );
}

/** What the test decided: a summary, the token binding, and each step with its status. */
function testResult(result: TestResult): HTMLElement {
  const summary =
    result.result === 'pass'
      ? `Pass: the exchange would issue ${result.token_type === 'DPoP' ? 'a DPoP-bound' : 'a Bearer'} access token valid for ${result.expires_in} seconds.`
      : `Fail: the exchange would be refused at the step “${STEP_LABELS[result.steps.find((step) => step.status === 'failed')?.name ?? ''] ?? 'unknown'}”.`;
  // RFC 9449: the token type the workload would get, and the key (cnf.jkt) a bound token needs.
  const binding =
    result.result === 'pass'
      ? h(
          'p',
          { class: 'binding', id: 'tester-binding' },
          'Token type: ',
          h('strong', {}, result.token_type ?? ''),
          result.dpop_jkt === null ? ' (no DPoP proof: anyone holding the token can use it)' : ', bound to the proof key with thumbprint ',
          result.dpop_jkt === null ? null : h('code', { class: 'thumbprint' }, result.dpop_jkt),
        )
      : result.dpop_jkt === null
        ? null
        : h('p', { class: 'binding', id: 'tester-binding' }, 'The DPoP proof’s key has the thumbprint ', h('code', { class: 'thumbprint' }, result.dpop_jkt));
  const steps = h('ol', { class: 'steps', id: 'tester-steps' });
  for (const step of result.steps) {
    append(
      steps,
      h(
        'li',
        { class: `step ${step.status}`, 'data-step': step.name, 'data-status': step.status },
        h('span', { class: 'step-name' }, STEP_LABELS[step.name] ?? step.name),
        ' ',
        h('span', { class: 'status' }, STATUS_LABELS[step.status] ?? step.status),
        h('p', { class: 'detail' }, step.detail),
      ),
    );
  }
  return h('div', { class: `card result ${result.result}` }, h('p', { class: 'summary', id: 'tester-summary' }, summary), binding, steps);
}

/** Chooses `policyId` in the tester and puts the focus on its token field. */
export function selectForTest(policyId: string): void {
  const select = document.getElementById('tester-policy') as HTMLSelectElement | null;
  if (!select) return;
  select.value = policyId;
  document.getElementById('tester-token')?.focus();
}
