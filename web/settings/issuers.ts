/** The issuers panel (docs/reference.md#issuers): each issuer's card, its deletion, and the form that adds one. */
import { ApiFailure, api, type Issuer } from './api';
import { append, h } from './dom';
import { clearErrors, confirmDialog, field, showError, type FormErrors } from './forms';
import { act, currentState, readOnly } from './page-state';

function keySource(issuer: Issuer): string {
  if (issuer.jwks) return `Inline key set (${issuer.jwks.keys.length} ${issuer.jwks.keys.length === 1 ? 'key' : 'keys'})`;
  if (issuer.jwks_url) return `JWKS URL ${issuer.jwks_url}`;
  return 'Discovery (jwks_uri of the issuer’s openid-configuration)';
}

/** The Issuers section: a card per issuer, then the form that adds one. */
export function issuersSection(): HTMLElement {
  const { issuers, policies } = currentState()!;
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
