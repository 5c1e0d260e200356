/** The recent exchanges panel: a policy's latest token exchanges, each refusal with its reason. */
import { api, messageOf, type ExchangeEvent } from './api';
import { append, h, replaceChildren } from './dom';
import { field } from './forms';
import { currentState } from './page-state';
import { policyOptions } from './policy-tester';

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


/** A key thumbprint as the page shows it: its first 12 characters (the full one is in the title). */
const shortThumbprint = (jkt: string) => `${jkt.slice(0, 12)}…`;

/** The Recent exchanges section: a policy choice and the place its events show in. */
export function eventsSection(): HTMLElement {
  const policySelect = h('select', { id: 'events-policy' });
  policyOptions(policySelect);
  const show = h('button', { type: 'button', class: 'secondary', disabled: currentState()!.policies.length === 0, onclick: () => void showEvents(policySelect.value) }, 'Show exchanges');
  return h(
    'section',
    { 'aria-labelledby': 'events-title', id: 'events' },
    h('h2', { id: 'events-title' }, 'Recent exchanges'),
    h('div', { class: 'card inline-form' }, field('Policy', policySelect).wrapper, show),
    h('div', { id: 'events-output', 'aria-live': 'polite' }),
  );
}

/** Loads the latest exchanges of `policyId` and shows them as a table, newest first. */
export async function showEvents(policyId: string): Promise<void> {
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
