// The ONLY module that imports @vscode/webview-ui-toolkit: swap the component library here and
// nothing else changes. Everything else asks for controls through these factories.

import { provideVSCodeDesignSystem, vsCodeButton, vsCodeCheckbox, vsCodeDropdown, vsCodeOption, vsCodeTextField } from '@vscode/webview-ui-toolkit';

let registered = false;

export function registerToolkit(): void {
  if (registered) return;
  registered = true;
  provideVSCodeDesignSystem().register(vsCodeButton(), vsCodeCheckbox(), vsCodeDropdown(), vsCodeOption(), vsCodeTextField());
}

/** A control with a string value (text field, dropdown). */
export interface ValueControl extends HTMLElement {
  value: string;
}
/** A control with a checked state. */
export interface CheckControl extends HTMLElement {
  checked: boolean;
}

export function createButton(label: string, ariaLabel: string, options: { appearance?: 'primary' | 'secondary' | 'icon'; id?: string } = {}): HTMLElement {
  const b = document.createElement('vscode-button');
  b.textContent = label;
  b.setAttribute('aria-label', ariaLabel);
  b.title = ariaLabel;
  if (options.appearance) b.setAttribute('appearance', options.appearance);
  if (options.id) b.id = options.id;
  return b;
}

export function createTextField(ariaLabel: string, options: { placeholder?: string; id?: string; value?: string } = {}): ValueControl {
  const f = document.createElement('vscode-text-field') as unknown as ValueControl;
  f.setAttribute('aria-label', ariaLabel);
  if (options.placeholder) f.setAttribute('placeholder', options.placeholder);
  if (options.id) f.id = options.id;
  if (options.value !== undefined) f.value = options.value;
  return f;
}

export function createDropdown(
  ariaLabel: string,
  choices: readonly { value: string; label: string }[],
  options: { id?: string; value?: string } = {},
): ValueControl {
  const d = document.createElement('vscode-dropdown') as unknown as ValueControl;
  d.setAttribute('aria-label', ariaLabel);
  if (options.id) d.id = options.id;
  for (const c of choices) {
    const o = document.createElement('vscode-option');
    o.setAttribute('value', c.value);
    o.textContent = c.label;
    if (c.value === options.value) o.setAttribute('selected', '');
    d.appendChild(o);
  }
  if (options.value !== undefined)
    queueMicrotask(() => {
      d.value = options.value!;
    });
  return d;
}

export function createCheckbox(label: string, options: { id?: string; checked?: boolean } = {}): CheckControl {
  const c = document.createElement('vscode-checkbox') as unknown as CheckControl;
  c.textContent = label;
  if (options.id) c.id = options.id;
  if (options.checked) c.checked = true;
  return c;
}
