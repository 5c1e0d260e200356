/**
 * What the Workload identity page shows, loaded through the admin API, and how a change made
 * on the page reaches it: the change, a reload, a re-render and an announcement.
 */
import { api, messageOf, type ApiKey, type Entitlement, type Issuer, type Policy } from './api';
import { h } from './dom';
import { showError, type FormErrors } from './forms';

/** The signed-in organization's entitlement, issuers, policies and keys. */
export interface State {
  entitlement: Entitlement;
  issuers: Issuer[];
  policies: Policy[];
  keys: ApiKey[];
}

let state: State | null = null;
let renderPage: () => void = () => {};

/** The page's data; null while signed out or loading. */
export function currentState(): State | null {
  return state;
}

/** Replaces the page's data (null on sign-in and sign-out). */
export function setState(next: State | null): void {
  state = next;
}

/** Sets what re-renders the whole page after a change. */
export function onRender(render: () => void): void {
  renderPage = render;
}

/** Whether the signed-in key may only read. */
export const readOnly = () => state?.entitlement.access_level !== 'read-write';

/** Reloads the issuers and policies. */
export async function refresh(): Promise<void> {
  const reloaded = state;
  if (!reloaded) return;
  const [issuers, policies] = await Promise.all([
    api<{ data: Issuer[] }>('GET', '/workload-identity/issuers'),
    api<{ data: Policy[] }>('GET', '/workload-identity/policies'),
  ]);
  // Signed out, or in with another key, meanwhile: these lists are another session's.
  if (state !== reloaded) return;
  state = { ...reloaded, issuers: issuers.data, policies: policies.data };
}

/** Runs a change, then reloads and re-renders; an error goes next to its field. */
export async function act(change: () => Promise<unknown>, done: string, errors?: FormErrors): Promise<boolean> {
  try {
    await change();
  } catch (error) {
    if (errors) showError(errors, error);
    else announce(`Failed: ${messageOf(error)}`);
    return false;
  }
  await refresh();
  renderPage();
  announce(done[0]!.toUpperCase() + done.slice(1) + '.');
  return true;
}

/** Says `text` to screen readers through the page's one live region. */
export function announce(text: string): void {
  let live = document.getElementById('announcer');
  if (!live) {
    live = h('p', { id: 'announcer', class: 'announcer', role: 'status', 'aria-live': 'polite' });
    document.body.appendChild(live);
  }
  live.textContent = text;
}
