// The hardware breakpoint/watchpoint section: the list the host pushes, the debug-register
// budget, and add / remove / enable / disable / modify controls that post typed requests. The
// host's answer is shown inline; an ENOSPC is explained with the kernel's pinned/flexible rule.

import type { ErrorInfo, WatchBudget, WatchInfo, WatchLength, WatchRequest, WatchSpec, WatchType } from '../shared/protocol';
import { describeLocation, describeTarget, parseWatchLocation, parseWatchTarget } from './watch-spec';
import { explainEnospc } from './budget';
import { createButton, createCheckbox, createDropdown, createTextField, type CheckControl, type ValueControl } from './toolkit';

export class WatchPanel {
  private watches: readonly WatchInfo[] = [];
  private budget: WatchBudget = { used: 0, total: 4, cpuPinned: 0, maxTaskPinned: 0, flexible: 0 };
  private readonly list: HTMLTableSectionElement;
  private readonly budgetText: HTMLElement;
  private readonly meter: HTMLElement;
  private readonly meterFill: HTMLElement;
  private readonly status: HTMLElement;
  private readonly location: ValueControl;
  private readonly type: ValueControl;
  private readonly length: ValueControl;
  private readonly targetKind: ValueControl;
  private readonly targetValue: ValueControl;
  private readonly pinned: CheckControl;
  private readonly submit: HTMLElement;
  private readonly cancel: HTMLElement;
  private editing: string | null = null;
  /** requestId → what it was, to phrase the reply. */
  private readonly pending = new Map<number, { what: string; pinned: boolean }>();

  constructor(
    host: HTMLElement,
    private readonly post: (request: WatchRequest) => number,
  ) {
    const section = document.createElement('section');
    section.className = 'rs-watch';
    section.setAttribute('aria-labelledby', 'rs-watch-title');
    host.appendChild(section);
    const title = document.createElement('h2');
    title.id = 'rs-watch-title';
    title.textContent = 'Hardware breakpoints';
    section.appendChild(title);

    const budgetRow = document.createElement('div');
    budgetRow.className = 'rs-budget';
    // A themed bar rather than <meter>, whose native look ignores the theme (a white bar on a dark background).
    this.meter = document.createElement('div');
    this.meter.className = 'rs-budget-meter';
    this.meter.setAttribute('role', 'meter');
    this.meter.setAttribute('aria-valuemin', '0');
    this.meter.setAttribute('aria-label', 'Debug registers in use');
    this.meterFill = document.createElement('div');
    this.meterFill.className = 'rs-budget-fill';
    this.meter.appendChild(this.meterFill);
    this.budgetText = document.createElement('span');
    this.budgetText.className = 'rs-budget-text';
    budgetRow.append(this.meter, this.budgetText);
    section.appendChild(budgetRow);

    const table = document.createElement('table');
    table.className = 'rs-watch-table';
    const head = table.createTHead().insertRow();
    for (const h of ['Location', 'Type', 'Len', 'Target', 'Enabled', 'Hits', '']) {
      const th = document.createElement('th');
      th.textContent = h;
      th.scope = 'col';
      head.appendChild(th);
    }
    this.list = table.createTBody();
    section.appendChild(table);

    const form = document.createElement('div');
    form.className = 'rs-watch-form';
    form.setAttribute('role', 'group');
    form.setAttribute('aria-label', 'Add or change a breakpoint');
    this.location = createTextField('Breakpoint location', { placeholder: '0xADDR, symbol or file.c:LINE', id: 'rs-watch-location' });
    this.type = createDropdown(
      'Access type',
      [
        { value: 'w', label: 'write (w)' },
        { value: 'rw', label: 'read/write (rw)' },
        { value: 'r', label: 'read (r)' },
        { value: 'x', label: 'execute (x)' },
      ],
      { id: 'rs-watch-type', value: 'w' },
    );
    this.length = createDropdown(
      'Length in bytes',
      [1, 2, 4, 8].map((n) => ({ value: String(n), label: `${n} byte${n > 1 ? 's' : ''}` })),
      { id: 'rs-watch-length', value: '4' },
    );
    this.targetKind = createDropdown(
      'Target',
      [
        { value: 'process', label: 'process' },
        { value: 'cpu', label: 'cpu' },
        { value: 'all-cpus', label: 'all CPUs' },
      ],
      { id: 'rs-watch-target-kind', value: 'process' },
    );
    this.targetValue = createTextField('Target pid or CPU', { placeholder: 'pid', id: 'rs-watch-target' });
    this.pinned = createCheckbox('pinned', { id: 'rs-watch-pinned' });
    this.submit = createButton('Add', 'Add breakpoint', { appearance: 'primary', id: 'rs-watch-submit' });
    this.cancel = createButton('Cancel', 'Cancel editing', { appearance: 'secondary', id: 'rs-watch-cancel' });
    this.cancel.hidden = true;
    this.submit.addEventListener('click', () => this.onSubmit());
    this.cancel.addEventListener('click', () => this.stopEditing());
    form.append(this.location, this.type, this.length, this.targetKind, this.targetValue, this.pinned, this.submit, this.cancel);
    section.appendChild(form);

    this.status = document.createElement('div');
    this.status.className = 'rs-watch-status';
    this.status.id = 'rs-watch-status';
    this.status.setAttribute('role', 'status');
    this.status.setAttribute('aria-live', 'polite');
    section.appendChild(this.status);
    this.renderBudget();
    this.setList([], this.budget);
  }

  setList(watches: readonly WatchInfo[], budget: WatchBudget): void {
    this.watches = watches;
    this.budget = budget;
    this.renderBudget();
    this.list.replaceChildren();
    if (watches.length === 0) {
      const empty = this.list.insertRow().insertCell();
      empty.colSpan = 7;
      empty.className = 'rs-hint';
      empty.textContent = 'No hardware breakpoints. Add one below, or from the editor gutter.';
    }
    // Uprobes take no debug register: listed apart, after the breakpoints the meter counts.
    const ordered = [...watches.filter((w) => w.probe !== 'uprobe'), ...watches.filter((w) => w.probe === 'uprobe')];
    for (const [index, w] of ordered.entries()) {
      if (w.probe === 'uprobe' && ordered[index - 1]?.probe !== 'uprobe') {
        const heading = this.list.insertRow().insertCell();
        heading.colSpan = 7;
        heading.className = 'rs-hint rs-watch-uprobes';
        heading.textContent = "Uprobes (source lines counted by the kernel's uprobes: no debug register, not in the meter)";
      }
      const tr = this.list.insertRow();
      tr.dataset.watchId = w.id;
      const cell = (text: string) => {
        const td = tr.insertCell();
        td.textContent = text;
        td.title = text;
        return td;
      };
      const loc = cell(describeLocation(w.location));
      if (w.resolvedAddress && w.location.kind !== 'address') loc.title = `${loc.textContent} (${w.resolvedAddress})`;
      cell(w.probe === 'uprobe' ? 'uprobe' : w.type);
      cell(w.probe === 'uprobe' ? '—' : String(w.length));
      cell(describeTarget(w.target) + (w.pinned ? ' · pinned' : ''));
      const enabledCell = tr.insertCell();
      const toggle = createCheckbox('', { checked: w.enabled });
      toggle.setAttribute('aria-label', `${w.enabled ? 'Disable' : 'Enable'} breakpoint at ${describeLocation(w.location)}`);
      // The kernel reserves a debug register when a breakpoint is opened, not when it is enabled.
      if (!w.enabled) toggle.title = 'Disabled: records nothing, but still holds its debug register until removed';
      toggle.classList.add('rs-watch-enable');
      toggle.addEventListener('change', () => {
        this.send(
          { op: toggle.checked ? 'enable' : 'disable', id: w.id },
          `${toggle.checked ? 'Enable' : 'Disable'} ${describeLocation(w.location)}`,
          w.pinned,
        );
      });
      enabledCell.appendChild(toggle);
      if (w.unseen !== undefined && w.hits === 0) cell('not seen here').title = w.unseen;
      else cell(w.hits.toLocaleString('en-US'));
      const actions = tr.insertCell();
      const edit = createButton('Edit', `Change breakpoint at ${describeLocation(w.location)}`, { appearance: 'secondary' });
      edit.classList.add('rs-watch-edit');
      edit.addEventListener('click', () => this.startEditing(w));
      const remove = createButton('Remove', `Remove breakpoint at ${describeLocation(w.location)}`, { appearance: 'secondary' });
      remove.classList.add('rs-watch-remove');
      remove.addEventListener('click', () => this.send({ op: 'remove', id: w.id }, `Remove ${describeLocation(w.location)}`, w.pinned));
      actions.append(edit, remove);
    }
  }

  /** The host's answer to one of our requests. */
  reply(replyTo: number, ok: boolean, error?: ErrorInfo): boolean {
    const request = this.pending.get(replyTo);
    if (!request) return false;
    this.pending.delete(replyTo);
    this.status.replaceChildren();
    this.status.classList.toggle('rs-error', !ok);
    const line = document.createElement('div');
    line.textContent = ok ? `${request.what}: done.` : `${request.what} failed: ${error?.code ?? 'error'}: ${error?.message ?? ''}`;
    this.status.appendChild(line);
    if (!ok && error?.hint) {
      const hint = document.createElement('div');
      hint.className = 'rs-hint';
      hint.textContent = error.hint;
      this.status.appendChild(hint);
    }
    if (!ok && error?.code === 'ENOSPC') {
      const why = document.createElement('div');
      why.className = 'rs-hint rs-enospc';
      why.textContent = explainEnospc(this.budget, request.pinned);
      this.status.appendChild(why);
    }
    if (ok && this.editing) this.stopEditing();
    return true;
  }

  private renderBudget(): void {
    const { used, total } = this.budget;
    this.meter.setAttribute('aria-valuemax', String(total));
    this.meter.setAttribute('aria-valuenow', String(used));
    this.meter.classList.toggle('rs-full', used >= total);
    this.meterFill.style.width = `${total > 0 ? Math.min(100, (100 * used) / total) : 0}%`;
    this.budgetText.textContent =
      `Debug registers: ${this.budget.used}/${this.budget.total} used ` +
      `(${this.budget.cpuPinned} pinned per-CPU, ${this.budget.maxTaskPinned} pinned by the busiest task, ${this.budget.flexible} flexible)` +
      (this.budget.heldByRecordings?.length ? `; also held by recordings: ${this.budget.heldByRecordings.join(', ')}` : '');
  }

  private startEditing(w: WatchInfo): void {
    this.editing = w.id;
    this.location.value = describeLocation(w.location);
    this.type.value = w.type;
    this.length.value = String(w.length);
    this.targetKind.value = w.target.kind;
    this.targetValue.value = w.target.kind === 'process' ? String(w.target.pid) : w.target.kind === 'cpu' ? String(w.target.cpu) : '';
    this.pinned.checked = w.pinned;
    this.submit.textContent = 'Apply change';
    this.submit.setAttribute('aria-label', `Apply change to breakpoint at ${describeLocation(w.location)}`);
    this.cancel.hidden = false;
  }

  private stopEditing(): void {
    this.editing = null;
    this.submit.textContent = 'Add';
    this.submit.setAttribute('aria-label', 'Add breakpoint');
    this.cancel.hidden = true;
  }

  private showProblem(text: string): void {
    this.status.classList.add('rs-error');
    this.status.textContent = text;
  }

  private onSubmit(): void {
    const location = parseWatchLocation(this.location.value ?? '');
    if (typeof location === 'string') {
      this.showProblem(location);
      return;
    }
    const target = parseWatchTarget(this.targetKind.value, this.targetValue.value ?? '');
    if (typeof target === 'string') {
      this.showProblem(target);
      return;
    }
    const type = this.type.value as WatchType;
    const length = Number(this.length.value) as WatchLength;
    if (!['r', 'w', 'rw', 'x'].includes(type)) {
      this.showProblem('Choose r, w, rw or x.');
      return;
    }
    if (![1, 2, 4, 8].includes(length)) {
      this.showProblem('Choose a length of 1, 2, 4 or 8 bytes.');
      return;
    }
    const spec: WatchSpec = { location, type, length, target, pinned: this.pinned.checked };
    if (this.editing) this.send({ op: 'modify', id: this.editing, spec }, `Change ${describeLocation(location)}`, spec.pinned);
    else this.send({ op: 'add', spec }, `Add ${describeLocation(location)}`, spec.pinned);
  }

  private send(request: WatchRequest, what: string, pinned: boolean): void {
    const id = this.post(request);
    this.pending.set(id, { what, pinned });
    this.status.classList.remove('rs-error');
    this.status.textContent = `${what}…`;
  }

  get count(): number {
    return this.watches.length;
  }
}
