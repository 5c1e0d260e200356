/** Form pieces the Workload identity page's sections share: fields, API errors, confirmation. */
import { ApiFailure, messageOf } from './api';
import { h, uid } from './dom';

/** A labelled field with a place for the error the API names it in. */
export function field(label: string, control: HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement, hint?: string) {
  const id = control.id || uid('field');
  control.id = id;
  const error = h('p', { class: 'field-error', id: `${id}-error`, 'aria-live': 'polite' });
  const hintElement = hint ? h('p', { class: 'hint', id: `${id}-hint` }, hint) : null;
  control.setAttribute('aria-describedby', [hintElement?.id, error.id].filter(Boolean).join(' '));
  const wrapper = h('div', { class: 'field' }, h('label', { for: id }, label), control, hintElement, error);
  return { wrapper, error, control };
}

/** Where a form shows errors: each field's by the API parameter name, and the form's own. */
export interface FormErrors {
  fields: Record<string, HTMLElement>;
  general: HTMLElement;
}

/** Puts an API error next to the field it names, or at the form when it names none. */
export function showError(errors: FormErrors, error: unknown): void {
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

/** Empties a form's error messages and unmarks its invalid controls. */
export function clearErrors(errors: FormErrors, form: HTMLFormElement): void {
  for (const element of [...Object.values(errors.fields), errors.general]) element.textContent = '';
  for (const control of form.querySelectorAll('[aria-invalid]')) control.removeAttribute('aria-invalid');
}

/** A modal confirmation; resolves true when the admin confirms. Escape and Cancel decline. */
export function confirmDialog(title: string, paragraphs: string[], confirmLabel: string): Promise<boolean> {
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
