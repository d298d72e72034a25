// Hardware breakpoints in the editor: gutter "Record Hits on This Line", "Watch Writes/Reads and Writes to
// <name>" (symbols, or any expression through the paused debug adapter), "Convert Breakpoints to
// Hardware Breakpoints", and the hits shown back: gutter decorations on armed lines, inline hit
// counts, CodeLens on watched variables, hovers with the last hits. Each armed set is a recording
// session of its own on the chosen target; its events are breakpoints (at most 4 debug registers), or, for a source
// line, uprobes where native/specs/line-probe.ts says so (breakpoints silent here, registers taken, or asked).

import { readlinkSync } from 'node:fs';
import path from 'node:path';
import * as vscode from 'vscode';
import type { HostToWebview, WatchInfo, WatchRequest, WatchSpec } from '../../shared/protocol';
import { PerfType, BreakpointType } from '../../native/abi/uapi';
import { predictedLoadBase } from '../../native/symbols/resolve';
import { runningLoadBase } from '../../native/symbols/target';
import type { SessionManager, SnapshotEntry } from '../session/session-manager';
import type { RecordTarget } from '../session/ports';
import {
  DEBUG_REGISTERS,
  competingHolders,
  executableLocator,
  freeRegisters,
  lineBreakpointSpec,
  planConversion,
  registerUse,
  summarizeHits,
  watchAddressSpec,
  lineHitsText,
  watchLensText,
  watchSpec,
  type UnseenHits,
  type BreakpointRequest,
  type HitSummary,
  type SourcePlace,
  type WatchAccess,
} from './hardware-breakpoints';
import { noticeSilentBreakpoints } from '../ui/breakpoint-notice';
import { breakpointDelivery } from '../../native/perf/breakpoint-delivery';
import type { LineProbeMode } from '../../native/specs/line-probe';
import { readPerfAccess, uprobeRefusal } from '../../native/sys/access';
import { activeSessionTarget, resolveContextOf, type ChosenTarget } from './session-target';

interface Armed {
  readonly id: string;
  readonly sessionId: string;
  readonly eventIndex: number;
  readonly spec: string;
  readonly kind: 'line' | 'watch';
  /** What counts it: a debug register, or (a source line only) the kernel's uprobes, which take none. */
  readonly probe: 'breakpoint' | 'uprobe';
  readonly file?: string;
  readonly line?: number;
  readonly name?: string;
  readonly access: 'x' | WatchAccess;
  readonly length: 1 | 2 | 4 | 8;
  readonly address?: bigint;
  readonly pid?: number;
  enabled: boolean;
  hits?: HitSummary;
  readonly locate?: (ip: bigint) => SourcePlace | undefined;
}

export interface TargetChooser {
  (): Promise<ChosenTarget | undefined>;
}

export class HardwareBreakpoints implements vscode.Disposable, vscode.CodeLensProvider, vscode.HoverProvider {
  private readonly armed: Armed[] = [];
  private readonly disposables: vscode.Disposable[] = [];
  private readonly lensesChanged = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.lensesChanged.event;
  private readonly gutter = vscode.window.createTextEditorDecorationType({
    gutterIconPath: undefined,
    overviewRulerColor: new vscode.ThemeColor('debugIcon.breakpointForeground'),
    overviewRulerLane: vscode.OverviewRulerLane.Left,
    before: { contentText: '◆', color: new vscode.ThemeColor('debugIcon.breakpointForeground'), margin: '0 0.3em 0 0' },
  });
  private readonly hitCount = vscode.window.createTextEditorDecorationType({
    after: { color: new vscode.ThemeColor('editorCodeLens.foreground'), margin: '0 0 0 2em' },
  });
  private nextId = 1;

  constructor(
    private readonly manager: SessionManager,
    private readonly chooseTarget: TargetChooser,
    private readonly log: (line: string) => void,
    private readonly onArmed: () => void,
    /** Data pages per ring (the ringside.bufferPages setting), read when a recording starts. */
    private readonly ringPages: () => number | undefined = () => undefined,
  ) {
    this.disposables.push(
      manager.onDidChange((change) => {
        if (change.what === 'snapshot') this.updateHits(change.sessionId);
        if (change.what === 'removed') this.forgetSession(change.sessionId);
        // A recording that opens or closes breakpoint events changes the registers the panel shows as held.
        if (change.what === 'started' || change.what === 'stopped') this.onArmed();
      }),
      vscode.window.onDidChangeVisibleTextEditors(() => this.decorate()),
      vscode.languages.registerCodeLensProvider([{ language: 'c' }, { language: 'cpp' }], this),
      vscode.languages.registerHoverProvider([{ language: 'c' }, { language: 'cpp' }], this),
    );
  }

  /**
   * Debug registers the busiest CPU has given to breakpoints of Ringside's open sessions: those armed here and the
   * breakpoint events of any recording (Start Recording, kept, attached). The kernel reserves a register when a
   * breakpoint is OPENED (kernel/events/hw_breakpoint.c: slots are taken at registration and released at close);
   * PERF_EVENT_IOC_DISABLE does not give it back, so a disabled breakpoint still counts. Checked on this kernel: 4 open,
   * 1 disabled, a 5th is still ENOSPC.
   */
  get slotsInUse(): number {
    return registerUse(this.manager.breakpointHolders()).used;
  }

  /** `mode`: auto (uprobes where breakpoints cannot see the line), or the mechanism the user picked. */
  async recordHitsOnLine(uri: vscode.Uri, line: number, mode: LineProbeMode = 'auto'): Promise<void> {
    const file = path.basename(uri.fsPath);
    await this.arm([{ spec: lineBreakpointSpec(file, line), kind: 'line', file: uri.fsPath, line, access: 'x', length: 8 }], undefined, mode);
  }

  /** The identifier under the cursor, as a global via symbols or any expression via the paused debugger. */
  async watch(editor: vscode.TextEditor, access: WatchAccess): Promise<void> {
    const range = editor.selection.isEmpty ? editor.document.getWordRangeAtPosition(editor.selection.active, /[A-Za-z_][\w.>\-[\]]*/) : editor.selection;
    const expression = range ? editor.document.getText(range).trim() : '';
    if (!expression) throw new Error('put the cursor on a variable to watch');
    const debug = vscode.debug.activeDebugSession;
    const frameId = vscode.debug.activeStackItem instanceof vscode.DebugStackFrame ? vscode.debug.activeStackItem.frameId : undefined;
    if (debug && frameId !== undefined) {
      const evaluate = async (text: string) => (await debug.customRequest('evaluate', { expression: text, frameId, context: 'watch' })) as { result: string };
      const addressText = (await evaluate(`(unsigned long)&(${expression})`)).result;
      const sizeText = (await evaluate(`sizeof(${expression})`)).result;
      const addressMatch = /0x[0-9a-f]+|\d+/i.exec(addressText)?.[0];
      const size = Number(/\d+/.exec(sizeText)?.[0] ?? NaN);
      if (!addressMatch || !Number.isInteger(size) || size <= 0)
        throw new Error(`the debugger could not give an address and size for "${expression}" (&: ${addressText}; sizeof: ${sizeText})`);
      const address = BigInt(addressMatch);
      const { spec, length, note } = watchAddressSpec(address, size, access);
      if (note) void vscode.window.showInformationMessage(`Ringside: ${expression}: ${note}`);
      // A paused debuggee is ptrace-stopped; perf events on it work like on any other process.
      const pid = await this.debuggeePid(debug);
      await this.arm(
        [{ spec, kind: 'watch', name: expression, access, length, address, file: editor.document.uri.fsPath, line: (range?.start.line ?? 0) + 1 }],
        pid,
      );
      return;
    }
    if (!/^[A-Za-z_]\w*$/.test(expression))
      throw new Error(`"${expression}" is not a global or static variable name; pause in the debugger to watch any expression (locals, heap objects)`);
    await this.arm([
      {
        spec: watchSpec(expression, access),
        kind: 'watch',
        name: expression,
        access,
        length: 8,
        file: editor.document.uri.fsPath,
        line: (range?.start.line ?? 0) + 1,
      },
    ]);
  }

  async convertDebuggerBreakpoints(
    scope: 'file' | 'workspace',
    disableOriginals: boolean,
  ): Promise<{
    armed: number;
    skipped: readonly { request: BreakpointRequest; reason: string }[];
  }> {
    const active = vscode.window.activeTextEditor?.document.uri.fsPath;
    const sources = vscode.debug.breakpoints
      .filter((bp): bp is vscode.SourceBreakpoint => bp instanceof vscode.SourceBreakpoint)
      .filter((bp) => scope === 'workspace' || bp.location.uri.fsPath === active);
    const requests: BreakpointRequest[] = sources.map((bp) => ({
      file: path.basename(bp.location.uri.fsPath),
      line: bp.location.range.start.line + 1,
      enabled: bp.enabled,
      ...(bp.condition ? { condition: bp.condition } : {}),
      ...(bp.logMessage ? { logMessage: bp.logMessage } : {}),
    }));
    const plan = planConversion(requests, this.slotsInUse, DEBUG_REGISTERS);
    if (plan.armed.length) {
      await this.arm(
        plan.armed.map(({ request, spec }) => {
          const original = sources[requests.indexOf(request)];
          return { spec, kind: 'line' as const, file: original.location.uri.fsPath, line: request.line, access: 'x' as const, length: 8 as const };
        }),
      );
      if (disableOriginals) {
        const armedOriginals = plan.armed.map(({ request }) => sources[requests.indexOf(request)]);
        vscode.debug.removeBreakpoints(armedOriginals);
        vscode.debug.addBreakpoints(armedOriginals.map((bp) => new vscode.SourceBreakpoint(bp.location, false, bp.condition, bp.hitCondition, bp.logMessage)));
      }
    }
    return { armed: plan.armed.length, skipped: plan.skipped };
  }

  /** Opens one recording session holding the given breakpoints on the chosen target. */
  private async arm(
    items: Omit<Armed, 'id' | 'sessionId' | 'eventIndex' | 'enabled' | 'locate' | 'probe'>[],
    pid?: number,
    mode: LineProbeMode = 'auto',
  ): Promise<void> {
    const chosen =
      pid !== undefined
        ? { target: { kind: 'pid' as const, pid }, executable: readlinkSync(`/proc/${pid}/exe`) }
        : (activeSessionTarget(this.manager) ?? (await this.chooseTarget()));
    if (!chosen) return;
    const context = resolveContextOf(chosen);
    const executable = context.executable;
    // Source lines go to uprobes where the one rule says (line-probe.ts): breakpoints silent here, too few registers, or asked.
    const events = await this.manager.backend.resolveEvents(
      items.map((item) => item.spec),
      context,
      { mode, freeRegisters: () => freeRegisters(registerUse(this.manager.breakpointHolders()), registerTarget(chosen.target)) },
    );
    // Why a line is counted the way it is (moved to uprobes, or uprobes refused and the fix): said before it runs.
    for (const event of events) {
      for (const note of event.notes) {
        const message = `${event.name}: ${note}`;
        this.log(message);
        if (!/uprobe/.test(note)) continue;
        // A refusal is a warning (the line may record nothing); a move to uprobes only informs.
        if (/refused/.test(note)) void vscode.window.showWarningMessage(`Ringside: ${message}`);
        else void vscode.window.showInformationMessage(`Ringside: ${message}`);
      }
    }
    // After the notes, so that a refusal (uprobes refused, registers taken) is said with the ENOSPC it leads to.
    this.assertRegistersFree(
      events.filter((event) => event.isBreakpoint).reduce((sum, event) => sum + 1 + (event.extraSites?.length ?? 0), 0),
      chosen.target,
    );
    // A line the compiler put in several functions takes one debug register per place: say so.
    const places = events.filter((event) => event.isBreakpoint && event.extraSites?.length);
    for (const event of places) {
      const message = `${event.name}: the line is in ${event.extraSites!.length + 1} places; each is armed with its own debug register and the hit count is their sum`;
      this.log(message);
      void vscode.window.showInformationMessage(`Ringside: ${message}`);
    }
    noticeSilentBreakpoints(events, (line) => this.log(line));
    const pages = this.ringPages();
    const session = await this.manager.startRecording({
      events,
      target: chosen.target,
      label: `breakpoints: ${items.map((i) => i.spec).join(', ')}`,
      ...(pages ? { pages } : {}),
    });
    let locate: ((ip: bigint) => SourcePlace | undefined) | undefined;
    if (executable) {
      try {
        const base = chosen.target.kind === 'pid' ? runningLoadBase(chosen.target.pid, executable) : predictedLoadBase(executable);
        locate = executableLocator(executable, base);
      } catch (error) {
        this.log(`breakpoints: hits will not be placed in the source: ${(error as Error).message}`);
      }
    }
    items.forEach((item, eventIndex) => {
      const resolved = events[eventIndex];
      const uprobe = resolved.uprobe !== undefined;
      this.armed.push({
        ...item,
        id: `w${this.nextId++}`,
        sessionId: session.id,
        eventIndex,
        enabled: true,
        probe: uprobe ? 'uprobe' : 'breakpoint',
        // A moved line is named as it is counted (line:FILE:LINE), with the line the line table gave.
        ...(uprobe && item.file !== undefined && resolved.location?.line !== undefined
          ? { spec: `line:${path.basename(item.file)}:${resolved.location.line}` }
          : {}),
        ...(resolved.location ? { address: resolved.location.address } : {}),
        ...(locate ? { locate } : {}),
        ...(session.childPid ? { pid: session.childPid } : chosen.target.kind === 'pid' ? { pid: chosen.target.pid } : {}),
      });
    });
    this.decorate();
    this.onArmed();
  }

  /** Refuses before opening anything when the open breakpoints of Ringside's sessions leave too few registers for `target`. */
  private assertRegistersFree(wanted: number, target: RecordTarget): void {
    if (wanted === 0) return;
    const where = registerTarget(target);
    const holders = this.manager.breakpointHolders();
    const free = freeRegisters(registerUse(holders), where);
    if (wanted <= free) return;
    const named = competingHolders(holders, where).map((holder) => `${holder.name} (${holder.sessionLabel})`);
    const on = where.kind === 'process' ? ` on pid ${where.pid}` : where.kind === 'cpus' ? ' on every CPU' : '';
    throw Object.assign(new Error(`only ${free} of ${DEBUG_REGISTERS} debug registers are free${on}; held by: ${named.join(', ') || 'other tools'}`), {
      code: 'ENOSPC',
    });
  }

  private async debuggeePid(debug: vscode.DebugSession): Promise<number> {
    const text = ((await debug.customRequest('evaluate', { expression: '(int)getpid()', context: 'watch' })) as { result: string }).result;
    const pid = Number(/\d+/.exec(text)?.[0]);
    if (!Number.isInteger(pid) || pid <= 0) throw new Error(`could not learn the debuggee's pid (getpid() gave ${text})`);
    return pid;
  }

  /**
   * Why `armed` can see no hit on this machine, with the probe's evidence and the fix, else undefined: a hardware
   * breakpoint where they do not fire (uprobes see every hit). For a line, the fix is a uprobe, or CAP_PERFMON for one.
   */
  private unseenHits(armed: Armed): UnseenHits {
    if (armed.probe === 'uprobe') return undefined;
    const delivery = breakpointDelivery();
    if (delivery.state !== 'silent') return undefined;
    if (armed.kind !== 'line') return delivery.message;
    const refusal = uprobeRefusal(readPerfAccess());
    return `${delivery.message} ${
      refusal
        ? `Uprobes, which count a line without debug registers, are refused too: ${refusal.reason}; ${refusal.hint}.`
        : 'Uprobes count a line here: record it again with auto or uprobe.'
    }`;
  }

  private updateHits(sessionId: string): void {
    const snapshot: SnapshotEntry | undefined = this.manager.get(sessionId).snapshots.slice(-1)[0];
    if (!snapshot) return;
    const mine = this.armed.filter((a) => a.sessionId === sessionId);
    for (const armed of mine) {
      armed.hits = summarizeHits(snapshot.decoded, armed.eventIndex, armed.locate ? (_pid, ip) => armed.locate!(ip) : undefined);
    }
    this.decorate();
    this.lensesChanged.fire();
    // The panel's Hits column shows these counts too: re-post the list, or it keeps 0 until some other change.
    if (mine.length) this.onArmed();
  }

  private forgetSession(sessionId: string): void {
    for (let i = this.armed.length - 1; i >= 0; i--) if (this.armed[i].sessionId === sessionId) this.armed.splice(i, 1);
    this.decorate();
    this.lensesChanged.fire();
    this.onArmed();
  }

  private decorate(): void {
    for (const editor of vscode.window.visibleTextEditors) {
      const file = editor.document.uri.fsPath;
      const lines = this.armed.filter((a) => a.kind === 'line' && a.file === file && a.line !== undefined);
      this.editorDecorations(editor, lines);
    }
  }

  private editorDecorations(editor: vscode.TextEditor, lines: Armed[]): void {
    const at = (line: number) => new vscode.Range(line - 1, 0, line - 1, 0);
    editor.setDecorations(
      this.gutter,
      lines.map((a) => ({ range: at(a.line!), hoverMessage: `Ringside ${probeName(a)} ${a.spec}${a.enabled ? '' : ' (disabled)'}` })),
    );
    editor.setDecorations(
      this.hitCount,
      lines
        .filter((a) => a.hits)
        .map((a) => ({
          range: new vscode.Range(a.line! - 1, Number.MAX_SAFE_INTEGER, a.line! - 1, Number.MAX_SAFE_INTEGER),
          renderOptions: { after: { contentText: lineHitsText(a.hits!.count, this.unseenHits(a)) } },
        })),
    );
  }

  provideCodeLenses(document: vscode.TextDocument): vscode.CodeLens[] {
    const lenses: vscode.CodeLens[] = [];
    for (const armed of this.armed.filter((a) => a.kind === 'watch' && a.name)) {
      const text = document.getText();
      const match = new RegExp(`\\b${armed.name!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`).exec(text);
      if (!match) continue;
      const position = document.positionAt(match.index);
      const title = armed.hits
        ? watchLensText(armed.hits, armed.access === 'x' ? 'rw' : armed.access, this.unseenHits(armed))
        : `watched (${armed.access}) — capture a snapshot to count`;
      lenses.push(new vscode.CodeLens(new vscode.Range(position, position), { title, command: 'ringside.showTimeline', arguments: [] }));
    }
    return lenses;
  }

  provideHover(document: vscode.TextDocument, position: vscode.Position): vscode.Hover | undefined {
    const line = position.line + 1;
    const armed = this.armed.find((a) => a.kind === 'line' && a.file === document.uri.fsPath && a.line === line && a.hits);
    if (!armed?.hits) return undefined;
    const unseen = this.unseenHits(armed);
    const markdown = new vscode.MarkdownString(`**Ringside** ${probeName(armed)} ${armed.spec}: ${lineHitsText(armed.hits.count, unseen)}\n\n`);
    markdown.isTrusted = false;
    if (unseen !== undefined && armed.hits.count === 0) markdown.appendText(`${unseen}\n`);
    for (const hit of armed.hits.last.slice(-5).reverse()) {
      markdown.appendText(
        `tid ${hit.tid} · ${hit.timeNs ?? '?'} ns · ip 0x${hit.ip.toString(16)}${hit.place?.function ? ` in ${hit.place.function}()` : ''}\n`,
      );
    }
    return new vscode.Hover(markdown);
  }

  /** The watch controls of the timeline. */
  readonly watchHandler = {
    handle: async (request: WatchRequest): Promise<void> => {
      switch (request.op) {
        case 'add':
          // The panel names its target: a process pid is armed on that process, not on whatever session is newest.
          await this.arm([this.fromWatchSpec(request.spec)], request.spec.target.kind === 'process' ? request.spec.target.pid : undefined);
          return;
        case 'remove': {
          const armed = this.find(request.id);
          const siblings = this.armed.filter((a) => a.sessionId === armed.sessionId);
          if (siblings.length === 1) await this.manager.remove(armed.sessionId);
          else {
            this.manager.setEventEnabled(armed.sessionId, armed.eventIndex, false);
            this.armed.splice(this.armed.indexOf(armed), 1);
          }
          this.decorate();
          return;
        }
        case 'enable':
        case 'disable': {
          const armed = this.find(request.id);
          this.manager.setEventEnabled(armed.sessionId, armed.eventIndex, request.op === 'enable');
          armed.enabled = request.op === 'enable';
          this.decorate();
          return;
        }
        case 'modify': {
          const armed = this.find(request.id);
          if (armed.probe === 'uprobe') throw new Error(`${armed.spec} is counted by uprobes, which are not changed in place: remove it and add the new place`);
          if (request.spec.location.kind !== 'address') throw new Error('modify in place takes an address (symbols and lines: remove and add)');
          const events = this.manager.events(armed.sessionId);
          const attr = events[armed.eventIndex].attr;
          this.manager.modifyEvent(armed.sessionId, armed.eventIndex, {
            ...attr,
            type: PerfType.BREAKPOINT,
            bpType: bpTypeOf(request.spec.type),
            config1: BigInt(request.spec.location.address),
            config2: BigInt(request.spec.type === 'x' ? 8 : request.spec.length),
          });
          return;
        }
      }
    },
    listMessage: (): HostToWebview => {
      const watches: WatchInfo[] = this.armed
        .map((a) => ({ a, unseen: this.unseenHits(a) }))
        .map(({ a, unseen }) => ({
          id: a.id,
          location:
            a.kind === 'line'
              ? { kind: 'line', file: a.file ?? '', line: a.line ?? 0 }
              : a.name
                ? { kind: 'symbol', symbol: a.name }
                : { kind: 'address', address: `0x${(a.address ?? 0n).toString(16)}` },
          type: a.access,
          length: a.length,
          target: a.pid !== undefined ? { kind: 'process', pid: a.pid } : { kind: 'all-cpus' },
          pinned: false,
          enabled: a.enabled,
          hits: a.hits?.count ?? 0,
          ...(a.probe === 'uprobe' ? { probe: 'uprobe' as const } : {}),
          ...(unseen !== undefined ? { unseen } : {}),
          ...(a.address !== undefined ? { resolvedAddress: `0x${a.address.toString(16)}` } : {}),
        }));
      // Every open breakpoint holds a register on current kernels (no flexible sharing): one bound to a process counts
      // for its threads, a CPU-wide one for the CPUs. Reporting them as flexible made the page explain a refusal with
      // "a register is free".
      const holders = this.manager.breakpointHolders();
      const { used, cpuPinned, maxTaskPinned } = registerUse(holders);
      const heldByRecordings = holders
        .filter((holder) => !this.armed.some((a) => a.sessionId === holder.sessionId && a.eventIndex === holder.eventIndex))
        .map((holder) => `${holder.name} (${holder.sessionLabel})`);
      return {
        type: 'watchList',
        watches,
        budget: { used, total: DEBUG_REGISTERS, cpuPinned, maxTaskPinned, flexible: 0, ...(heldByRecordings.length ? { heldByRecordings } : {}) },
      };
    },
  };

  private fromWatchSpec(spec: WatchSpec): Omit<Armed, 'id' | 'sessionId' | 'eventIndex' | 'enabled' | 'locate' | 'probe'> {
    const access = spec.type;
    switch (spec.location.kind) {
      case 'line':
        return {
          spec: lineBreakpointSpec(path.basename(spec.location.file), spec.location.line),
          kind: 'line',
          file: spec.location.file,
          line: spec.location.line,
          access: 'x',
          length: 8,
        };
      case 'symbol':
        if (access === 'x') return { spec: `mem:${spec.location.symbol}:x`, kind: 'line', access: 'x', length: 8 };
        if (access === 'r') throw new Error('x86 debug registers cannot watch reads alone: use rw');
        return {
          spec: watchSpec(spec.location.symbol, access, { length: spec.length }),
          kind: 'watch',
          name: spec.location.symbol,
          access,
          length: spec.length,
        };
      case 'address': {
        const address = BigInt(spec.location.address);
        if (access === 'x') return { spec: `mem:0x${address.toString(16)}:x`, kind: 'line', access: 'x', length: 8, address };
        if (access === 'r') throw new Error('x86 debug registers cannot watch reads alone: use rw');
        return { spec: `mem:0x${address.toString(16)}/${spec.length}:${access}:u`, kind: 'watch', access, length: spec.length, address };
      }
    }
  }

  private find(id: string): Armed {
    const armed = this.armed.find((a) => a.id === id);
    if (!armed) throw new Error(`no breakpoint ${id}`);
    return armed;
  }

  dispose(): void {
    for (const disposable of this.disposables.splice(0)) disposable.dispose();
    this.gutter.dispose();
    this.hitCount.dispose();
    this.lensesChanged.dispose();
  }
}

/** What the kernel side of an armed item is called in the hover. */
function probeName(armed: Armed): string {
  return armed.probe === 'uprobe' ? 'uprobe' : 'hardware breakpoint';
}

/** Where a recording's breakpoints would hold registers (hardware-breakpoints.ts's freeRegisters rule). */
function registerTarget(target: RecordTarget): { readonly kind: 'process'; readonly pid: number } | { readonly kind: 'cpus' | 'new-process' } {
  return target.kind === 'pid' ? { kind: 'process', pid: target.pid } : { kind: target.kind === 'cpus' ? 'cpus' : 'new-process' };
}

function bpTypeOf(type: WatchSpec['type']): number {
  switch (type) {
    case 'r':
      return BreakpointType.R;
    case 'w':
      return BreakpointType.W;
    case 'rw':
      return BreakpointType.RW;
    case 'x':
      return BreakpointType.X;
  }
}
