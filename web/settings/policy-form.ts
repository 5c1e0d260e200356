/**
 * The policy editor (docs/reference.md#federation-policies): one form for a new policy or a
 * change to one, its condition checked by the API as it is typed.
 */
import { api, messageOf, type ApiKey, type ConditionCheck, type Policy } from './api';
import { append, debounce, h, replaceChildren } from './dom';
import { clearErrors, field, type FormErrors } from './forms';
import { act, currentState } from './page-state';

/** The claim checks a policy may hold, each at most once. */
export const CLAIM_CHECKS = [
  { id: 'scopes', label: 'Scopes claim contains', hint: 'The token’s scopes claim must be a list of strings containing this value.' },
  { id: 'token_type', label: 'token_type claim equals', hint: 'The token’s token_type claim (not the header typ) must equal this value.' },
] as const;
type ClaimCheckId = (typeof CLAIM_CHECKS)[number]['id'];

const REQUIRE_DPOP_HINT =
  'Issue only sender-constrained tokens: an exchange must carry a DPoP proof (RFC 9449), and the token is then useless without the workload’s private key.';

/** An API key as the acts-as choice and the policy card name it: kind, scope and access. */
export function keyChoiceLabel(key: ApiKey): string {
  const scope = key.kind === 'workspace' ? 'inference' : 'management';
  return `${key.name} (${key.label}) · ${key.kind} key · scope ${scope}${key.access_level ? ` · ${key.access_level}` : ''}`;
}

/** The editor form: a new policy when `policy` is null, else changes to that one. */
export function policyForm(policy: Policy | null): HTMLElement {
  const name = field('Name', h('input', { id: 'policy-name', required: true, maxlength: 100 }));
  name.control.value = policy?.name ?? '';
  const issuer = issuerField(policy);
  const subject = field('Subject (optional)', h('input', { id: 'policy-subject', maxlength: 512 }), 'When set, the token’s sub must equal it exactly.');
  subject.control.value = policy?.subject ?? '';
  const audience = field('Audience', h('input', { id: 'policy-audience', required: true, maxlength: 512 }), 'One aud value of the token must equal it exactly.');
  audience.control.value = policy?.audience ?? '';
  const condition = conditionField(policy);
  const actsAs = actsAsField(policy);
  const checks = claimChecksField(policy);
  const requireDpop = requireDpopField(policy);
  const enabled = h('input', { type: 'checkbox', role: 'switch', id: 'policy-enabled', class: 'switch' });
  enabled.checked = policy?.enabled ?? true;
  const general = h('p', { class: 'form-error', role: 'alert' });
  const errors: FormErrors = {
    fields: {
      name: name.error,
      issuer_id: issuer.error,
      subject: subject.error,
      audience: audience.error,
      condition: condition.error,
      api_key_hash: actsAs.error,
      claim_checks: general,
      require_dpop: general,
    },
    general,
  };
  const form = h(
    'form',
    { class: 'card', id: 'policy-form', 'aria-labelledby': 'policy-form-title', novalidate: true },
    h('h3', { id: 'policy-form-title' }, policy ? `Edit policy “${policy.name}”` : 'New policy'),
    name.wrapper,
    issuer.wrapper,
    subject.wrapper,
    audience.wrapper,
    condition.wrapper,
    actsAs.wrapper,
    checks.box,
    requireDpop.wrapper,
    h('div', { class: 'field checkbox' }, enabled, h('label', { for: 'policy-enabled' }, 'Enabled')),
    general,
    h(
      'div',
      { class: 'actions' },
      h('button', { type: 'button', class: 'secondary', onclick: () => replaceChildren(document.getElementById('policy-editor')!) }, 'Cancel'),
      h('button', { type: 'submit' }, policy ? 'Save policy' : 'Create policy'),
    ),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    Object.assign(errors.fields, checks.errors);
    clearErrors(errors, form);
    const optional = (value: string) => (value.trim() === '' ? null : value.trim());
    const body = {
      name: name.control.value.trim(),
      issuer_id: issuer.control.value,
      subject: optional(subject.control.value),
      audience: audience.control.value.trim(),
      condition: optional(condition.control.value),
      api_key_hash: actsAs.control.value,
      enabled: enabled.checked,
      claim_checks: { scopes: checks.present.get('scopes') ?? null, token_type: checks.present.get('token_type') ?? null },
      require_dpop: requireDpop.input.checked,
    };
    void savePolicy(policy, body, errors);
  });
  return form;
}

/** Creates the policy, or changes the one being edited. */
async function savePolicy(policy: Policy | null, body: { name: string }, errors: FormErrors): Promise<void> {
  await act(
    () => (policy ? api('PATCH', `/workload-identity/policies/${encodeURIComponent(policy.id)}`, body) : api('POST', '/workload-identity/policies', body)),
    policy ? `policy ${body.name} saved` : `policy ${body.name} created`,
    errors,
  );
}

function issuerField(policy: Policy | null) {
  const select = h('select', { id: 'policy-issuer', required: true });
  for (const issuer of currentState()!.issuers) append(select, h('option', { value: issuer.id }, `${issuer.name} (${issuer.issuer_url})`));
  if (policy) select.value = policy.issuer_id;
  return field('Issuer', select);
}

/** The condition's text area, checked by the server as one types (docs/reference.md#conditions rule 1). */
function conditionField(policy: Policy | null) {
  const input = h('textarea', { id: 'policy-condition', rows: 3, maxlength: 2000, spellcheck: 'false' });
  input.value = policy?.condition ?? '';
  const condition = field('Condition (optional, CEL)', input, 'Variables: subject, audience, scopes, token_type. Must yield a bool.');
  const status = h('p', { class: 'condition-status', id: 'policy-condition-status', 'aria-live': 'polite' });
  condition.wrapper.insertBefore(status, condition.error);
  const checkNow = async (source: string) => {
    if (source.trim() === '') {
      status.textContent = '';
      status.removeAttribute('data-valid');
      return;
    }
    try {
      const { data } = await api<{ data: ConditionCheck }>('POST', '/workload-identity/conditions/check', { condition: source });
      // A later keystroke may have changed the text while this check was on its way.
      if (input.value !== source) return;
      status.textContent = data.valid ? 'The condition is valid.' : `Not valid: ${data.message}`;
      status.setAttribute('data-valid', String(data.valid));
    } catch (error) {
      status.textContent = `Cannot check the condition: ${messageOf(error)}`;
    }
  };
  // Every failure is shown beside the field (checkNow catches it): nothing is left to reject.
  const check = debounce((source: string) => void checkNow(source), 300);
  input.addEventListener('input', () => check(input.value));
  if (input.value !== '') check(input.value);
  return condition;
}

/** docs/reference.md#federation-policies: workspace keys (scope inference) and management keys (scope management); never personal keys. */
function actsAsField(policy: Policy | null) {
  const select = h('select', { id: 'policy-key', required: true });
  append(select, h('option', { value: '' }, 'Choose a key…'));
  for (const [kind, title] of [
    ['workspace', 'Workspace keys: scope inference'],
    ['management', 'Management keys: scope management'],
  ] as const) {
    const group = h('optgroup', { label: title });
    for (const key of currentState()!.keys.filter((candidate) => candidate.kind === kind && !candidate.disabled)) append(group, h('option', { value: key.hash }, keyChoiceLabel(key)));
    if (group.childElementCount > 0) append(select, group);
  }
  if (policy) select.value = policy.api_key_hash;
  return field('Acts as API key', select, 'Issued tokens act as this key: a workspace key gives scope inference, a management key scope management.');
}

/** docs/reference.md#federation-policies rule 3: each claim check at most once, added and removed on its own. */
function claimChecksField(policy: Policy | null) {
  const present = new Map<ClaimCheckId, string>();
  for (const check of CLAIM_CHECKS) if (policy && policy.claim_checks[check.id] !== null) present.set(check.id, policy.claim_checks[check.id]!);
  const errors: Record<string, HTMLElement> = {};
  const box = h('fieldset', { class: 'claim-checks', id: 'claim-checks' });
  const render = () => {
    replaceChildren(box, h('legend', {}, 'Claim checks'));
    for (const check of CLAIM_CHECKS) {
      if (!present.has(check.id)) continue;
      const row = claimCheckRow(check, present, () => {
        present.delete(check.id);
        render();
        box.querySelector<HTMLElement>('select, button')?.focus();
      });
      errors[`claim_checks.${check.id}`] = row.error;
      append(box, row.wrapper);
    }
    if (present.size === 0) append(box, h('p', { class: 'hint' }, 'No claim checks.'));
    const missing = CLAIM_CHECKS.filter((check) => !present.has(check.id));
    if (missing.length > 0) {
      append(box, addClaimCheck(missing, (id) => {
        present.set(id, '');
        render();
        document.getElementById(`claim-check-${id}`)?.focus();
      }));
    }
  };
  render();
  return { box, present, errors };
}

function claimCheckRow(check: (typeof CLAIM_CHECKS)[number], present: Map<ClaimCheckId, string>, remove: () => void) {
  const input = h('input', { id: `claim-check-${check.id}`, required: true, maxlength: 512 });
  input.value = present.get(check.id)!;
  input.addEventListener('input', () => present.set(check.id, input.value));
  const row = field(check.label, input, check.hint);
  append(row.wrapper, h('button', { type: 'button', class: 'secondary small', 'aria-label': `Remove the ${check.id} claim check`, onclick: remove }, 'Remove'));
  return row;
}

function addClaimCheck(missing: readonly (typeof CLAIM_CHECKS)[number][], add: (id: ClaimCheckId) => void): HTMLElement {
  const menu = h('select', { id: 'claim-check-add', 'aria-label': 'Claim check to add' });
  for (const check of missing) append(menu, h('option', { value: check.id }, check.label));
  const button = h('button', { type: 'button', class: 'secondary small', onclick: () => add(menu.value as ClaimCheckId) }, 'Add claim check');
  return h('div', { class: 'add-check' }, h('label', { for: 'claim-check-add' }, 'Add a check'), menu, button);
}

function requireDpopField(policy: Policy | null) {
  const input = h('input', { type: 'checkbox', id: 'policy-require-dpop', 'aria-describedby': 'policy-require-dpop-hint' });
  input.checked = policy?.require_dpop ?? false;
  const wrapper = h(
    'div',
    { class: 'field' },
    h('div', { class: 'checkbox-row' }, input, h('label', { for: 'policy-require-dpop' }, 'Require DPoP')),
    h('p', { class: 'hint', id: 'policy-require-dpop-hint' }, REQUIRE_DPOP_HINT),
  );
  return { wrapper, input };
}
