/**
 * The policies panel (docs/reference.md#federation-policies): each policy's card with its
 * switch and actions, and the place its editor (policy-form.ts) opens in.
 */
import { api, type Policy } from './api';
import { append, h, replaceChildren, uid } from './dom';
import { showEvents } from './exchange-events';
import { confirmDialog } from './forms';
import { act, currentState, readOnly } from './page-state';
import { CLAIM_CHECKS, keyChoiceLabel, policyForm } from './policy-form';
import { selectForTest } from './policy-tester';

/** The Policies section: a card per policy, the New policy button and the editor's place. */
export function policiesSection(): HTMLElement {
  const { policies, issuers } = currentState()!;
  const list = h('ul', { class: 'cards', id: 'policy-list', 'aria-label': 'Policies' });
  for (const policy of policies) append(list, policyCard(policy));
  if (policies.length === 0) append(list, h('li', { class: 'empty' }, 'No policies yet.'));
  const create = h(
    'button',
    { type: 'button', id: 'new-policy', disabled: readOnly() || issuers.length === 0, onclick: () => openPolicyEditor(null) },
    'New policy',
  );
  const editor = h('div', { id: 'policy-editor' });
  return h(
    'section',
    { 'aria-labelledby': 'policies-title', id: 'policies' },
    h('h2', { id: 'policies-title' }, 'Policies'),
    list,
    issuers.length === 0 ? h('p', { class: 'hint' }, 'Add an issuer first: every policy names one.') : null,
    create,
    editor,
  );
}

/** One policy's card: what it says, its switch, and what can be done with it. */
function policyCard(policy: Policy): HTMLElement {
  const switchId = uid('enabled');
  const enabled = h('input', { type: 'checkbox', role: 'switch', id: switchId, class: 'switch', disabled: readOnly() });
  enabled.checked = policy.enabled;
  enabled.addEventListener('change', () => {
    const wanted = enabled.checked;
    void act(() => api('PATCH', `/workload-identity/policies/${encodeURIComponent(policy.id)}`, { enabled: wanted }), wanted ? `policy ${policy.name} enabled` : `policy ${policy.name} paused`);
  });
  const copied = h('span', { class: 'copied', 'aria-live': 'polite' });
  return h(
    'li',
    { class: `card policy${policy.enabled ? '' : ' paused'}`, 'data-policy-id': policy.id },
    h('h3', { class: 'policy-name' }, policy.name),
    h(
      'p',
      { class: 'policy-id-row' },
      h('span', { class: 'visually-hidden' }, 'Policy id '),
      h('code', { class: 'policy-id' }, policy.id),
      h('button', { type: 'button', class: 'secondary small', 'aria-label': `Copy the id of policy ${policy.name}`, onclick: () => void copyId(policy.id, copied) }, 'Copy id'),
      copied,
    ),
    policyDetails(policy),
    h('div', { class: 'field checkbox' }, enabled, h('label', { for: switchId }, 'Enabled'), h('span', { class: 'state' }, policy.enabled ? '' : ' (paused: new exchanges are refused)')),
    h(
      'div',
      { class: 'actions' },
      h('button', { type: 'button', class: 'secondary', disabled: readOnly(), 'aria-label': `Edit policy ${policy.name}`, onclick: () => openPolicyEditor(policy) }, 'Edit'),
      h('button', { type: 'button', class: 'secondary', 'aria-label': `Test policy ${policy.name}`, onclick: () => selectForTest(policy.id) }, 'Test'),
      h('button', { type: 'button', class: 'secondary', 'aria-label': `Show exchanges of policy ${policy.name}`, onclick: () => void showEvents(policy.id) }, 'Exchanges'),
      h('button', { type: 'button', class: 'danger', disabled: readOnly(), 'aria-label': `Delete policy ${policy.name}`, onclick: () => void deletePolicy(policy) }, 'Delete'),
    ),
  );
}

/** What a policy says, as a description list. */
function policyDetails(policy: Policy): HTMLElement {
  const issuer = currentState()!.issuers.find((candidate) => candidate.id === policy.issuer_id);
  const key = currentState()!.keys.find((candidate) => candidate.hash === policy.api_key_hash);
  const checks = CLAIM_CHECKS.filter((check) => policy.claim_checks[check.id] !== null).map((check) => `${check.label} ${JSON.stringify(policy.claim_checks[check.id])}`);
  return h(
    'dl',
    {},
    h('dt', {}, 'Issuer'),
    h('dd', {}, issuer ? issuer.name : policy.issuer_id),
    h('dt', {}, 'Audience'),
    h('dd', { class: 'mono' }, policy.audience),
    h('dt', {}, 'Subject'),
    h('dd', { class: 'mono' }, policy.subject ?? '(any: the condition decides)'),
    h('dt', {}, 'Condition'),
    h('dd', { class: 'mono' }, policy.condition ?? '(none)'),
    h('dt', {}, 'Claim checks'),
    h('dd', {}, checks.length ? checks.join('; ') : '(none)'),
    h('dt', {}, 'Acts as'),
    h('dd', {}, key ? keyChoiceLabel(key) : `key ${policy.api_key_hash.slice(0, 12)}… · scope ${policy.scope}`),
    h('dt', {}, 'DPoP'),
    h(
      'dd',
      { class: 'policy-dpop', 'data-required': String(policy.require_dpop) },
      policy.require_dpop ? 'Required: only DPoP-bound tokens are issued' : 'Optional: Bearer tokens without a proof, bound tokens with one',
    ),
  );
}

async function copyId(id: string, status: HTMLElement): Promise<void> {
  try {
    await navigator.clipboard.writeText(id);
    status.textContent = 'Copied';
  } catch {
    status.textContent = 'Copy failed: select the id and copy it';
  }
}

async function deletePolicy(policy: Policy): Promise<void> {
  // docs/reference.md#lifecycle: new exchanges fail; tokens already issued stay valid.
  const confirmed = await confirmDialog(
    `Delete the policy “${policy.name}”?`,
    ['New token exchanges naming it fail at once.', 'Access tokens already issued under it stay valid until they expire (at most 15 minutes).'],
    'Delete policy',
  );
  if (!confirmed) return;
  await act(() => api('DELETE', `/workload-identity/policies/${encodeURIComponent(policy.id)}`), `policy ${policy.name} deleted`);
}

function openPolicyEditor(policy: Policy | null): void {
  const host = document.getElementById('policy-editor');
  if (!host) return;
  replaceChildren(host, policyForm(policy));
  host.querySelector<HTMLInputElement>('input')?.focus();
}
