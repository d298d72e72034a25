// The transforms applied to the call tree and flame graph, as a row of breadcrumbs (Firefox Profiler's): the first
// crumb is the untransformed tree, each next one a transform; clicking a crumb goes back to it (the later ones are
// dropped), its × removes that transform alone. The menu offering transforms for a function (right-click, or the
// keys f / F / m / C on a focused row, as Firefox Profiler binds them) is here too.

import { el } from './dom';
import { libraryFrameName, transformLabel, type CallTreeTransform } from './call-tree-transforms';

export class TransformBar {
  readonly element: HTMLElement;
  private list: CallTreeTransform[] = [];

  constructor(
    parent: HTMLElement,
    private readonly onChange: (transforms: readonly CallTreeTransform[]) => void,
  ) {
    this.element = el('nav', 'rs-transforms', parent);
    this.element.setAttribute('aria-label', 'Call tree transforms');
    this.render();
  }

  get transforms(): readonly CallTreeTransform[] {
    return this.list;
  }

  push(t: CallTreeTransform): void {
    const key = JSON.stringify(t);
    if (this.list.some((known) => JSON.stringify(known) === key)) return; // the same transform twice changes nothing
    this.set([...this.list, t]);
  }

  private set(list: CallTreeTransform[]): void {
    this.list = list;
    this.render();
    this.onChange(this.list);
  }

  private render(): void {
    this.element.replaceChildren();
    this.element.hidden = this.list.length === 0;
    if (this.list.length === 0) return;
    const root = el('button', 'rs-transform-crumb', this.element, 'Complete tree');
    root.type = 'button';
    root.title = 'Remove every transform';
    root.addEventListener('click', () => this.set([]));
    this.list.forEach((t, i) => {
      el('span', 'rs-transform-sep', this.element, '›').setAttribute('aria-hidden', 'true');
      const crumb = el('span', 'rs-transform', this.element);
      crumb.dataset.kind = t.kind;
      const label = el('button', 'rs-transform-crumb', crumb, transformLabel(t));
      label.type = 'button';
      if (i === this.list.length - 1) label.setAttribute('aria-current', 'true');
      label.title = 'Go back to this transform (drops the ones after it)';
      label.addEventListener('click', () => this.set(this.list.slice(0, i + 1)));
      const remove = el('button', 'rs-transform-remove', crumb, '×');
      remove.type = 'button';
      remove.title = `Remove "${transformLabel(t)}"`;
      remove.setAttribute('aria-label', `Remove ${transformLabel(t)}`);
      remove.addEventListener('click', () => this.set(this.list.filter((_, j) => j !== i)));
    });
  }
}

/** What a function offers: its name, the call path to it from the root (top-down trees only) and its library. */
export interface TransformTarget {
  readonly name: string;
  readonly path: readonly string[] | null;
  readonly library: string | null;
}

/** The transforms offered for a target, with the key Firefox Profiler binds each to. */
export function transformChoices(target: TransformTarget): { readonly key: string; readonly label: string; readonly transform: CallTreeTransform }[] {
  const out: { key: string; label: string; transform: CallTreeTransform }[] = [];
  if (target.path && target.path.length > 0) {
    out.push({ key: 'f', label: 'Focus on subtree only', transform: { kind: 'focus-subtree', path: target.path } });
  }
  out.push({ key: 'F', label: `Focus on function ${target.name}`, transform: { kind: 'focus-function', name: target.name } });
  out.push({ key: 'm', label: `Merge function ${target.name} into its callers`, transform: { kind: 'merge-function', name: target.name } });
  if (target.library) {
    out.push({
      key: 'C',
      label: `Collapse ${libraryFrameName(target.library)} into one node`,
      transform: { kind: 'collapse-library', library: target.library },
    });
  }
  return out;
}

/** A small menu of transforms at client point (x, y) inside `host`; closes on a choice, Escape or a click elsewhere. */
export function openTransformMenu(host: HTMLElement, x: number, y: number, target: TransformTarget, apply: (t: CallTreeTransform) => void): void {
  host.querySelector('.rs-transform-menu')?.remove();
  const menu = el('div', 'rs-transform-menu', host);
  menu.setAttribute('role', 'menu');
  const close = () => {
    menu.remove();
    document.removeEventListener('pointerdown', outside, true);
  };
  const outside = (e: Event) => {
    if (!menu.contains(e.target as Node)) close();
  };
  for (const choice of transformChoices(target)) {
    const item = el('button', 'rs-transform-item', menu, choice.label);
    item.type = 'button';
    item.setAttribute('role', 'menuitem');
    item.dataset.kind = choice.transform.kind;
    el('kbd', '', item, choice.key);
    item.addEventListener('click', () => {
      close();
      apply(choice.transform);
    });
  }
  menu.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') {
      e.preventDefault();
      close();
    }
  });
  const box = host.getBoundingClientRect();
  menu.style.left = `${Math.max(0, Math.min(x - box.left, box.width - 260))}px`;
  menu.style.top = `${y - box.top + host.scrollTop}px`;
  document.addEventListener('pointerdown', outside, true);
  menu.querySelector<HTMLButtonElement>('button')?.focus();
}
