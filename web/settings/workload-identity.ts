/**
 * The Workload identity settings page (docs/reference.md#workload-identity, docs/reference.md#issuers, docs/reference.md#federation-policies, docs/reference.md#lifecycle): issuers, policies, the
 * policy tester and recent exchanges, then the organization's usage (usage.ts), all through
 * the admin API with the admin's own management key. Everything shown is text (dom.ts); nothing is evaluated here, the
 * condition included: the API's own checker judges it. This module signs in and out, loads
 * the page's data and lays out its sections.
 */
import { ApiFailure, allKeys, api, forgetKey, messageOf, storeKey, storedKey, type ApiKey, type Entitlement, type Issuer, type Policy } from './api';
import { h, replaceChildren } from './dom';
import { eventsSection } from './exchange-events';
import { issuersSection } from './issuers';
import { currentState, onRender, readOnly, setState } from './page-state';
import { policiesSection } from './policies';
import { testerSection } from './policy-tester';
import { usageSection } from './usage';

const app = document.getElementById('app')!;
/** The usage section of the signed-in key: built once per sign-in, kept across re-renders. */
let usage: HTMLElement | null = null;

// ---------------------------------------------------------------------------------------
// Sign in and out

function showSignIn(message?: string): void {
  setState(null);
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
      setState({ entitlement, issuers: [], policies: [], keys: [] });
      render();
      return;
    }
    const [issuers, policies, keys] = await Promise.all([
      api<{ data: Issuer[] }>('GET', '/workload-identity/issuers'),
      api<{ data: Policy[] }>('GET', '/workload-identity/policies'),
      // Management keys too: a policy may act as one.
      allKeys<ApiKey>('include_management=true'),
    ]);
    setState({ entitlement, issuers: issuers.data, policies: policies.data, keys });
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

// ---------------------------------------------------------------------------------------
// The page

function render(): void {
  const state = currentState();
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

// ---------------------------------------------------------------------------------------

onRender(render);
if (storedKey()) void load();
else showSignIn();
