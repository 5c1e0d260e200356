/**
 * The Workload identity settings page (docs/reference.md#workload-identity, docs/reference.md#issuers, docs/reference.md#federation-policies, docs/reference.md#lifecycle): issuers, policies, the
 * policy tester and recent exchanges, then the organization's usage (usage.ts), all through
 * the admin API with the admin's own management key. Everything shown is text (dom.ts); nothing is evaluated here, the
 * condition included: the API's own checker judges it.
 */
import {
  API_BASE,
  ApiFailure,
  api,
  forgetKey,
  messageOf,
  storeKey,
  storedKey,
  type ApiKey,
  type ConditionCheck,
  type Entitlement,
  type ExchangeEvent,
  type Issuer,
  type Policy,
  type TestResult,
} from './api';
import { append, debounce, h, replaceChildren, uid } from './dom';
import { usageSection } from './usage';

interface State {
  entitlement: Entitlement;
  issuers: Issuer[];
  policies: Policy[];
  keys: ApiKey[];
}

const CLAIM_CHECKS = [
  { id: 'scopes', label: 'Scopes claim contains', hint: 'The token’s scopes claim must be a list of strings containing this value.' },
  { id: 'token_type', label: 'token_type claim equals', hint: 'The token’s token_type claim (not the header typ) must equal this value.' },
] as const;
type ClaimCheckId = (typeof CLAIM_CHECKS)[number]['id'];

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

/** What each refusal reason of an exchange event means (docs/workload-identity.md lists the codes). */
const REASON_LABELS: Record<string, string> = {
  policy_not_found: 'No such policy',
  policy_paused: 'Policy paused',
  issuer_deleted: 'Issuer deleted',
  no_entitlement: 'Plan without workload identity',
  key_disabled: 'Acting key disabled',
  key_deleted: 'Acting key deleted',
  key_expired: 'Acting key expired',
  malformed_token: 'Malformed token',
  token_type_refused: 'Token type refused',
  unsupported_alg: 'Unsupported signing algorithm',
  unknown_kid: 'Unknown signing key (kid)',
  bad_signature: 'Bad signature',
  keys_unavailable: 'Issuer keys unavailable',
  expired: 'Token expired',
  not_yet_valid: 'Token not yet valid',
  iss_mismatch: 'Issuer (iss) mismatch',
  aud_mismatch: 'Audience (aud) mismatch',
  sub_mismatch: 'Subject (sub) mismatch',
  claim_too_large: 'Claim too large',
  claim_check_failed: 'Claim check failed',
  condition_false: 'Condition false',
  condition_error: 'Condition error',
  scope_mismatch: 'Scope not granted',
  replayed: 'Token replayed (jti seen before)',
  rate_limited: 'Rate limited',
  issuance_failed: 'Issuance failed (the workload may retry)',
  dpop_proof_invalid: 'Invalid DPoP proof',
  dpop_proof_replayed: 'DPoP proof replayed',
  dpop_proof_required: 'DPoP proof required by the policy',
};

const REQUIRE_DPOP_HINT =
  'Issue only sender-constrained tokens: an exchange must carry a DPoP proof (RFC 9449), and the token is then useless without the workload’s private key.';

/** A key thumbprint as the page shows it: its first 12 characters (the full one is in the title). */
const shortThumbprint = (jkt: string) => `${jkt.slice(0, 12)}…`;

const app = document.getElementById('app')!;
let state: State | null = null;
/** The usage section of the signed-in key: built once per sign-in, kept across re-renders. */
let usage: HTMLElement | null = null;

const readOnly = () => state?.entitlement.access_level !== 'read-write';

// ---------------------------------------------------------------------------------------
// Sign in and out

function showSignIn(message?: string): void {
  state = null;
  usage = null;
  const input = h('input', { id: 'management-key', name: 'management-key', type: 'password', autocomplete: 'off', required: true, spellcheck: 'false' });
  const error = h('p', { class: 'form-error', role: 'alert' }, message ?? '');
  const form = h(
    'form',
    { class: 'card sign-in', 'aria-labelledby': 'sign-in-title' },
    h('h2', { id: 'sign-in-title' }, 'Sign in'),
    h('p', {}, 'Paste a management key of your organization. It is kept in this browser tab only and forgotten when you sign out or close the tab.'),
    h('label', { for: 'management-key' }, 'Management key'),
    input,
    error,
    h('button', { type: 'submit' }, 'Sign in'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const key = input.value.trim();
    if (key === '') return;
    storeKey(key);
    void load();
  });
  replaceChildren(app, form);
  input.focus();
}

function signOut(): void {
  forgetKey();
  showSignIn();
}

async function load(): Promise<void> {
  replaceChildren(app, h('p', { class: 'loading', role: 'status' }, 'Loading…'));
  try {
    const entitlement = (await api<{ data: Entitlement }>('GET', '/workload-identity/entitlement')).data;
    // Usage is every plan's: it loads beside the rest, and shows its own failures.
    usage = usageSection();
    if (!entitlement.entitled) {
      state = { entitlement, issuers: [], policies: [], keys: [] };
      render();
      return;
    }
    const [issuers, policies, keys] = await Promise.all([
      api<{ data: Issuer[] }>('GET', '/workload-identity/issuers'),
      api<{ data: Policy[] }>('GET', '/workload-identity/policies'),
      // Management keys too: a policy may act as one.
      api<{ data: ApiKey[] }>('GET', '/keys?include_management=true'),
    ]);
    state = { entitlement, issuers: issuers.data, policies: policies.data, keys: keys.data };
    render();
  } catch (error) {
    if (error instanceof ApiFailure && (error.status === 401 || error.status === 403)) {
      forgetKey();
      showSignIn(error.status === 401 ? `Not signed in: ${error.message}.` : `This key cannot manage the organization: ${error.message}.`);
      return;
    }
    replaceChildren(app, h('p', { class: 'form-error', role: 'alert' }, messageOf(error)), h('button', { type: 'button', onclick: () => void load() }, 'Try again'));
  }
}

async function refresh(): Promise<void> {
  if (!state) return;
  const [issuers, policies] = await Promise.all([
    api<{ data: Issuer[] }>('GET', '/workload-identity/issuers'),
    api<{ data: Policy[] }>('GET', '/workload-identity/policies'),
  ]);
  state.issuers = issuers.data;
  state.policies = policies.data;
}

// ---------------------------------------------------------------------------------------
// The page

function render(): void {
  if (!state) return;
  const { entitlement } = state;
  const session = h(
    'section',
    { class: 'session', 'aria-label': 'Session' },
    h(
      'p',
      {},
      'Signed in with a ',
      h('strong', {}, entitlement.access_level === 'read-write' ? 'read-write' : 'read-only'),
      ' management key. Plan: ',
      h('strong', { id: 'plan' }, entitlement.plan),
      '.',
    ),
    h('button', { type: 'button', class: 'secondary', onclick: signOut }, 'Sign out'),
  );
  const entitlementNote = entitlement.entitled
    ? h('p', { class: 'entitlement ok', id: 'entitlement' }, 'Workload identity federation is included in your plan.')
    : h(
        'p',
        { class: 'entitlement missing', id: 'entitlement', role: 'status' },
        `Workload identity federation requires the Business or Enterprise plan. Your organization is on the ${entitlement.plan} plan; upgrade to configure issuers and policies.`,
      );
  if (!entitlement.entitled) {
    replaceChildren(app, session, entitlementNote, usage);
    return;
  }
  const readOnlyNote = readOnly()
    ? h('p', { class: 'note', id: 'read-only-note' }, 'This key is read-only: you can see everything and run the policy tester, but not change anything.')
    : null;
  replaceChildren(app, session, entitlementNote, readOnlyNote, issuersSection(), policiesSection(), testerSection(), eventsSection(), usage);
}

/** A labelled field with a place for the error the API names it in. */
function field(label: string, control: HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement, hint?: string) {
  const id = control.id || uid('field');
  control.id = id;
  const error = h('p', { class: 'field-error', id: `${id}-error`, 'aria-live': 'polite' });
  const hintElement = hint ? h('p', { class: 'hint', id: `${id}-hint` }, hint) : null;
  control.setAttribute('aria-describedby', [hintElement?.id, error.id].filter(Boolean).join(' '));
  const wrapper = h('div', { class: 'field' }, h('label', { for: id }, label), control, hintElement, error);
  return { wrapper, error, control };
}

interface FormErrors {
  fields: Record<string, HTMLElement>;
  general: HTMLElement;
}

/** Puts an API error next to the field it names, or at the form when it names none. */
function showError(errors: FormErrors, error: unknown): void {
  for (const element of [...Object.values(errors.fields), errors.general]) element.textContent = '';
  const parameter = error instanceof ApiFailure ? error.parameter : null;
  const target = parameter ? (errors.fields[parameter] ?? errors.fields[parameter.split('.')[0]!]) : undefined;
  (target ?? errors.general).textContent = messageOf(error);
  const control = target?.parentElement?.querySelector<HTMLElement>('input, textarea, select');
  if (control) {
    control.setAttribute('aria-invalid', 'true');
    control.focus();
  }
}

function clearErrors(errors: FormErrors, form: HTMLFormElement): void {
  for (const element of [...Object.values(errors.fields), errors.general]) element.textContent = '';
  for (const control of form.querySelectorAll('[aria-invalid]')) control.removeAttribute('aria-invalid');
}

/** A modal confirmation; resolves true when the admin confirms. Escape and Cancel decline. */
function confirmDialog(title: string, paragraphs: string[], confirmLabel: string): Promise<boolean> {
  return new Promise((resolve) => {
    const titleId = uid('dialog-title');
    const confirm = h('button', { type: 'button', class: 'danger' }, confirmLabel);
    const cancel = h('button', { type: 'button', class: 'secondary' }, 'Cancel');
    const dialog = h(
      'dialog',
      { 'aria-labelledby': titleId, class: 'confirm' },
      h('h2', { id: titleId }, title),
      ...paragraphs.map((text) => h('p', {}, text)),
      h('div', { class: 'actions' }, cancel, confirm),
    );
    const finish = (answer: boolean) => {
      dialog.close();
      dialog.remove();
      resolve(answer);
    };
    confirm.addEventListener('click', () => finish(true));
    cancel.addEventListener('click', () => finish(false));
    dialog.addEventListener('cancel', (event) => {
      event.preventDefault();
      finish(false);
    });
    document.body.appendChild(dialog);
    dialog.showModal();
    cancel.focus();
  });
}

// ---------------------------------------------------------------------------------------
// Issuers (docs/reference.md#issuers)

function keySource(issuer: Issuer): string {
  if (issuer.jwks) return `Inline key set (${issuer.jwks.keys.length} ${issuer.jwks.keys.length === 1 ? 'key' : 'keys'})`;
  if (issuer.jwks_url) return `JWKS URL ${issuer.jwks_url}`;
  return 'Discovery (jwks_uri of the issuer’s openid-configuration)';
}

function issuersSection(): HTMLElement {
  const { issuers, policies } = state!;
  const list = h('ul', { class: 'cards', id: 'issuer-list', 'aria-label': 'Issuers' });
  for (const issuer of issuers) {
    const count = policies.filter((policy) => policy.issuer_id === issuer.id).length;
    append(
      list,
      h(
        'li',
        { class: 'card issuer', 'data-issuer-id': issuer.id },
        h('h3', { class: 'issuer-name' }, issuer.name),
        h('dl', {}, h('dt', {}, 'Issuer URL'), h('dd', { class: 'mono' }, issuer.issuer_url), h('dt', {}, 'Keys'), h('dd', {}, keySource(issuer)), h('dt', {}, 'Policies'), h('dd', {}, String(count))),
        h(
          'button',
          {
            type: 'button',
            class: 'danger',
            disabled: readOnly(),
            'aria-label': `Delete issuer ${issuer.name}`,
            onclick: () => void deleteIssuer(issuer, count),
          },
          'Delete',
        ),
      ),
    );
  }
  if (issuers.length === 0) append(list, h('li', { class: 'empty' }, 'No issuers yet.'));
  return h('section', { 'aria-labelledby': 'issuers-title', id: 'issuers' }, h('h2', { id: 'issuers-title' }, 'Issuers'), list, issuerForm());
}

async function deleteIssuer(issuer: Issuer, policyCount: number): Promise<void> {
  // docs/reference.md#lifecycle: deleting an issuer stops new exchanges; tokens already issued stay valid.
  const confirmed = await confirmDialog(
    `Delete the issuer “${issuer.name}”?`,
    [
      policyCount === 0
        ? 'It has no policies.'
        : `Its ${policyCount} ${policyCount === 1 ? 'policy is' : 'policies are'} deleted with it, and new token exchanges naming ${policyCount === 1 ? 'it' : 'them'} fail at once.`,
      'Access tokens already issued stay valid until they expire (at most 15 minutes).',
    ],
    'Delete issuer',
  );
  if (!confirmed) return;
  await act(() => api('DELETE', `/workload-identity/issuers/${encodeURIComponent(issuer.id)}`), 'issuer deleted');
}

function issuerForm(): HTMLElement {
  const name = field('Name', h('input', { id: 'issuer-name', name: 'name', required: true, maxlength: 100 }));
  const url = field('Issuer URL', h('input', { id: 'issuer-url', name: 'issuer_url', type: 'url', required: true, placeholder: 'https://token.actions.githubusercontent.com' }), 'Must equal the iss claim of its tokens, character for character.');
  const jwksUrl = field('JWKS URL (optional)', h('input', { id: 'issuer-jwks-url', name: 'jwks_url', type: 'url' }), 'When empty, the keys are found through the issuer’s openid-configuration.');
  const jwks = field('Inline key set (optional)', h('textarea', { id: 'issuer-jwks', name: 'jwks', rows: 3, placeholder: '{"keys": [...]}' }), 'For an issuer the service cannot reach: its public JWK Set.');
  const checkJti = h('input', { id: 'issuer-check-jti', type: 'checkbox', name: 'check_jti' });
  const general = h('p', { class: 'form-error', role: 'alert' });
  const submit = h('button', { type: 'submit', disabled: readOnly() }, 'Add issuer');
  const form = h(
    'form',
    { class: 'card', id: 'issuer-form', 'aria-labelledby': 'issuer-form-title', novalidate: true },
    h('h3', { id: 'issuer-form-title' }, 'Add an issuer'),
    h('fieldset', { disabled: readOnly() }, name.wrapper, url.wrapper, jwksUrl.wrapper, jwks.wrapper, h('div', { class: 'field checkbox' }, checkJti, h('label', { for: 'issuer-check-jti' }, 'Refuse a token whose jti was already exchanged'))),
    general,
    submit,
  );
  const errors: FormErrors = { fields: { name: name.error, issuer_url: url.error, jwks_url: jwksUrl.error, jwks: jwks.error }, general };
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    clearErrors(errors, form);
    const body: Record<string, unknown> = { name: name.control.value.trim(), issuer_url: url.control.value.trim(), check_jti: checkJti.checked };
    if (jwksUrl.control.value.trim() !== '') body.jwks_url = jwksUrl.control.value.trim();
    if (jwks.control.value.trim() !== '') {
      try {
        body.jwks = JSON.parse(jwks.control.value);
      } catch {
        showError(errors, new ApiFailure(400, 'The inline key set is not JSON', 'jwks'));
        return;
      }
    }
    void act(() => api('POST', '/workload-identity/issuers', body), 'issuer added', errors);
  });
  return form;
}

/** Runs a change, then reloads and re-renders; an error goes next to its field. */
async function act(change: () => Promise<unknown>, done: string, errors?: FormErrors): Promise<boolean> {
  try {
    await change();
  } catch (error) {
    if (errors) showError(errors, error);
    else announce(`Failed: ${messageOf(error)}`);
    return false;
  }
  await refresh();
  render();
  announce(done[0]!.toUpperCase() + done.slice(1) + '.');
  return true;
}

function announce(text: string): void {
  let live = document.getElementById('announcer');
  if (!live) {
    live = h('p', { id: 'announcer', class: 'announcer', role: 'status', 'aria-live': 'polite' });
    document.body.appendChild(live);
  }
  live.textContent = text;
}

// ---------------------------------------------------------------------------------------
// Policies (docs/reference.md#federation-policies)

function keyChoiceLabel(key: ApiKey): string {
  const scope = key.kind === 'workspace' ? 'inference' : 'management';
  return `${key.name} (${key.label}) · ${key.kind} key · scope ${scope}${key.access_level ? ` · ${key.access_level}` : ''}`;
}

function policiesSection(): HTMLElement {
  const { policies, issuers } = state!;
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
  const issuer = state!.issuers.find((candidate) => candidate.id === policy.issuer_id);
  const key = state!.keys.find((candidate) => candidate.hash === policy.api_key_hash);
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

function policyForm(policy: Policy | null): HTMLElement {
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
  for (const issuer of state!.issuers) append(select, h('option', { value: issuer.id }, `${issuer.name} (${issuer.issuer_url})`));
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
  const check = debounce(async (source: string) => {
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
  }, 300);
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
    for (const key of state!.keys.filter((candidate) => candidate.kind === kind && !candidate.disabled)) append(group, h('option', { value: key.hash }, keyChoiceLabel(key)));
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

// ---------------------------------------------------------------------------------------
// Policy tester (docs/reference.md#subject-tokens, docs/reference.md#conditions step by step)

function policyOptions(select: HTMLSelectElement): void {
  for (const policy of state!.policies) append(select, h('option', { value: policy.id }, `${policy.name}${policy.enabled ? '' : ' (paused)'}`));
}

function testerSection(): HTMLElement {
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
    h('button', { type: 'submit', disabled: state!.policies.length === 0 }, 'Run test'),
  );
  const errors: FormErrors = { fields: { subject_token: tokenField.error, dpop_proof: proofField.error }, general };
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
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

function selectForTest(policyId: string): void {
  const select = document.getElementById('tester-policy') as HTMLSelectElement | null;
  if (!select) return;
  select.value = policyId;
  document.getElementById('tester-token')?.focus();
}

// ---------------------------------------------------------------------------------------
// Recent exchanges

function eventsSection(): HTMLElement {
  const policySelect = h('select', { id: 'events-policy' });
  policyOptions(policySelect);
  const show = h('button', { type: 'button', class: 'secondary', disabled: state!.policies.length === 0, onclick: () => void showEvents(policySelect.value) }, 'Show exchanges');
  return h(
    'section',
    { 'aria-labelledby': 'events-title', id: 'events' },
    h('h2', { id: 'events-title' }, 'Recent exchanges'),
    h('div', { class: 'card inline-form' }, field('Policy', policySelect).wrapper, show),
    h('div', { id: 'events-output', 'aria-live': 'polite' }),
  );
}

async function showEvents(policyId: string): Promise<void> {
  const output = document.getElementById('events-output');
  const select = document.getElementById('events-policy') as HTMLSelectElement | null;
  if (!output) return;
  if (select) select.value = policyId;
  replaceChildren(output, h('p', { role: 'status' }, 'Loading…'));
  try {
    const { data } = await api<{ data: ExchangeEvent[] }>('GET', `/workload-identity/events?policy_id=${encodeURIComponent(policyId)}&limit=20`);
    if (data.length === 0) {
      replaceChildren(output, h('p', { class: 'empty' }, 'No exchanges yet for this policy.'));
    } else {
      const table = h(
        'table',
        { id: 'events-table' },
        h('caption', {}, 'Newest first'),
        h('thead', {}, h('tr', {}, ...['Time', 'Outcome', 'Reason', 'Token', 'Subject', 'Address'].map((title) => h('th', { scope: 'col' }, title)))),
      );
      const body = h('tbody');
      for (const event of data) {
        append(
          body,
          h(
            'tr',
            { class: event.outcome },
            h('td', {}, new Date(event.time).toLocaleString()),
            h('td', {}, event.outcome),
            h('td', {}, event.reason === null ? '' : reasonLabel(event.reason)),
            h('td', { class: 'token-binding', title: event.dpop_jkt ?? undefined }, tokenBinding(event)),
            h('td', { class: 'mono' }, event.subject === null ? '' : `${event.subject}${event.subject_verified ? '' : ' (unverified)'}`),
            h('td', { class: 'mono' }, event.source_ip),
          ),
        );
      }
      append(table, body);
      replaceChildren(output, h('div', { class: 'table-scroll' }, table));
    }
  } catch (error) {
    replaceChildren(output, h('p', { class: 'form-error', role: 'alert' }, messageOf(error)));
  }
  output.scrollIntoView({ block: 'nearest' });
}

/** A refusal reason in words, with its code as the API and the metrics name it. */
function reasonLabel(reason: string): HTMLElement {
  const label = REASON_LABELS[reason];
  return h('span', { class: 'reason', 'data-reason': reason }, label ?? reason, label ? ' ' : null, label ? h('code', { class: 'reason-code' }, reason) : null);
}

/** RFC 9449: what the issued token is bound to; for a refusal, the key of the valid proof it carried. */
function tokenBinding(event: ExchangeEvent): string {
  if (event.outcome === 'issued') return event.dpop_jkt === null ? 'Bearer' : `DPoP-bound to ${shortThumbprint(event.dpop_jkt)}`;
  return event.dpop_jkt === null ? '' : `DPoP proof key ${shortThumbprint(event.dpop_jkt)}`;
}

// ---------------------------------------------------------------------------------------

if (storedKey()) void load();
else showSignIn();
