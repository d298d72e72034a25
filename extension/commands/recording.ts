// Recording and capturing: Start Recording…, Start Kept Recording…, Capture Snapshot (from the palette or a
// session), Stop Recording, and pause/resume/stop/remove of a session in the Sessions view.

import path from 'node:path';
import * as vscode from 'vscode';
import type { KeeperState } from '../../native/keeper/state';
import { CaptureCancelled, type SnapshotEntry } from '../session/session-manager';
import { formatBytes } from '../../native/abi/units';
import type { RecordTarget } from '../session/ports';
import { TimelinePanel } from '../panel/timeline-panel';
import type { SessionNode } from '../ui/sessions-view';
import { pickEvents, pickRecordingsToStop, pickTarget } from '../ui/pickers';
import { noticeKeptSilentBreakpoints, noticeSilentBreakpoints } from '../ui/breakpoint-notice';
import { lineBreakpointSpec } from '../editor/hardware-breakpoints';
import { registerCommand, samplingSettings, settings, type Services } from '../services';
import { withProgressAfterASecond, type ProgressSink } from '../ui/progress';

export function registerRecordingCommands(context: vscode.ExtensionContext, services: Services): void {
  const { sessions, keepers, backend, log, timelineHost, cliPath } = services;

  const sessionIdOf = (node?: SessionNode): string => {
    if (node?.kind === 'session') return node.session.id;
    const active = sessions.active();
    if (!active) throw new Error('no recording is running: use Ringside: Start Recording…');
    return active.id;
  };

  /**
   * Takes a snapshot and shows it: the panel opens (or comes forward) at once, so its page loads while the rings are
   * copied and decoded; the records are painted first and the names follow (TimelinePanel.addSnapshot). Progress, with
   * Cancel, for as long as that takes (a big snapshot at once, any other after a second), in a notification and in the
   * panel. Cancelled, nothing is kept: undefined.
   */
  const capture = async (sessionId: string): Promise<SnapshotEntry | undefined> => {
    const stats = sessions.ringStats(sessionId);
    const bytes = stats.reduce((sum, ring) => sum + Math.min(ring.dataSize, Number(ring.bytesWritten)), 0);
    const panel = TimelinePanel.show(timelineHost);
    const take = async (progress: ProgressSink): Promise<SnapshotEntry | undefined> => {
      const entry = await sessions.snapshot(sessionId, (message) => progress.step(message), undefined, progress.cancelled);
      log(
        `snapshot ${entry.name}: ${entry.recordCount} records, ${formatBytes(entry.sizeBytes)}, longest pause ${(entry.maxPauseNs / 1e3).toFixed(1)} µs, decoded in ${entry.decodeMs.toFixed(1)} ms`,
      );
      // Cancelled while its names are resolved: the snapshot goes, and the page drops it.
      const dropping = progress.onCancelled(() => {
        if (sessions.allSnapshots().some((s) => s.id === entry.id)) sessions.deleteSnapshot(entry.id);
      });
      try {
        progress.step(`${entry.recordCount.toLocaleString('en-US')} records; naming functions`);
        // Shown again: the panel may have been closed meanwhile.
        await TimelinePanel.show(timelineHost).addSnapshot(entry);
      } finally {
        dropping.dispose();
      }
      return progress.cancelled() ? undefined : entry;
    };
    try {
      return await withProgressAfterASecond(`Ringside: snapshot of ${formatBytes(bytes)}`, take, { immediately: bytes >= settings().bigSnapshotBytes, panel });
    } catch (error) {
      if (!(error instanceof CaptureCancelled)) throw error;
      log(error.message);
      return undefined;
    }
  };

  /**
   * Capture Snapshot is always offered: with one recording it snapshots it; with several it asks
   * which (or all); with none it offers the kept recorders it can see, attaching to another ring, or
   * starting a recording, so the command never answers "no matching commands".
   */
  const captureFromPalette = async (): Promise<void> => {
    const live = sessions.list().filter((s) => s.state !== 'stopped');
    if (live.length === 1) {
      await capture(live[0].id);
      return;
    }
    if (live.length > 1) {
      const picked = await vscode.window.showQuickPick(
        [
          ...live.map((s) => ({ label: s.label, description: `${s.kind} · ${s.snapshots.length} snapshot(s)`, ids: [s.id] })),
          { label: '$(files) All of them', description: `${live.length} recordings`, ids: live.map((s) => s.id) },
        ],
        { title: 'Ringside: capture a snapshot of which recording?' },
      );
      for (const id of picked?.ids ?? []) await capture(id);
      return;
    }
    type Choice = vscode.QuickPickItem & { keeper?: KeeperState; then?: string };
    const kept = keepers.list().filter((k) => k.state && k.alive);
    const choices: Choice[] = [
      ...kept.map((k) => ({
        label: `$(lock) keeper ${k.state!.pid}`,
        description: k.state!.events.map((e) => e.name).join(', '),
        detail: 'attach to this kept recorder and capture',
        keeper: k.state!,
      })),
      {
        label: '$(plug) Attach to Event…',
        detail: 'a ring another process owns (perf record --overwrite), or a persistent event',
        then: 'ringside.attachToEvent',
      },
      { label: '$(record) Start Recording…', detail: 'open events now; capture once something happened', then: 'ringside.startRecording' },
    ];
    const picked = await vscode.window.showQuickPick(choices, { title: 'Ringside: nothing is recording yet. Capture from…' });
    if (!picked) return;
    if (picked.keeper) {
      noticeKeptSilentBreakpoints(picked.keeper.limitations, log);
      const session = await sessions.attachKeeper(picked.keeper);
      await capture(session.id);
      return;
    }
    if (picked.then) await vscode.commands.executeCommand(picked.then);
  };

  /** Specs resolved against the picked target: its symbols name watchpoints and source lines. */
  const resolveForTarget = async (specs: readonly string[], chosen: NonNullable<Awaited<ReturnType<typeof pickTarget>>>) => {
    const events = await backend.resolveEvents(specs, {
      ...(chosen.target.kind === 'pid' ? { pid: chosen.target.pid } : {}),
      ...(chosen.executable ? { executable: chosen.executable } : {}),
    });
    // What resolving decided (a source line moved to uprobes, or why not), as the CLI prints it.
    for (const event of events) for (const note of event.notes) log(`${event.name}: ${note}`);
    return events;
  };

  const startRecording = async (kept: boolean) => {
    const s = settings();
    const specs = await pickEvents(context.workspaceState, s.defaultEvents);
    if (!specs) return;
    const chosen = await pickTarget();
    if (!chosen) return;
    if (kept || s.keeper) {
      // The keeper resolves the specs itself; resolving them here too says what resolving decided (a watchpoint of
      // user-space accesses only, a line moved to uprobes) as a plain recording does, and a bad spec fails before a
      // keeper is started.
      await resolveForTarget(specs, chosen);
      const target =
        chosen.target.kind === 'launch'
          ? { kind: 'launch' as const, argv: chosen.target.argv }
          : chosen.target.kind === 'pid'
            ? chosen.target
            : { kind: 'cpus' as const };
      const state = await keepers.start({
        cliPath,
        events: specs,
        target,
        pages: s.pages,
        ...samplingSettings(s),
        ...(s.windowSec !== undefined ? { windowSec: s.windowSec } : {}),
        ...(chosen.target.kind === 'launch' && chosen.target.cwd ? { cwd: chosen.target.cwd } : {}),
      });
      log(`keeper ${state.pid} holds ${state.rings.length} ring(s); attaching`);
      noticeKeptSilentBreakpoints(state.limitations, log);
      await sessions.attachKeeper(state);
      return;
    }
    const target: RecordTarget = chosen.target;
    const events = await resolveForTarget(specs, chosen);
    // A watchpoint among the events on a machine whose breakpoints never fire: said now, not as a lane that stays empty.
    noticeSilentBreakpoints(events, log);
    const session = await sessions.startRecording({ events, target, pages: s.pages });
    log(`recording ${session.label} (${session.id})`);
  };

  /**
   * Snapshot When…: records the chosen events plus a trigger event, and every time the trigger fires
   * takes a snapshot by itself (it appears in the Sessions view as it arrives), at most once a second,
   * while the recording goes on. The trigger's own record is in the snapshot. `triggerSpec` (the gutter) skips the
   * question; `suggested` (the timeline's "Snapshot When This Fires") only fills it in, for the user to confirm.
   */
  const snapshotWhen = async (triggerSpec?: string, suggested?: string) => {
    const s = settings();
    const trigger =
      triggerSpec ??
      (await vscode.window.showInputBox({
        title: 'Ringside: snapshot when which event fires?',
        prompt: 'a tracepoint (syscalls:sys_enter_kill), a software event, or a breakpoint (mem:SYMBOL:w, mem:file.c:LINE)',
        value: suggested ?? 'syscalls:sys_enter_kill',
        ignoreFocusOut: true,
      }));
    if (!trigger) return;
    const specs = await pickEvents(context.workspaceState, s.defaultEvents);
    if (!specs) return;
    const chosen = await pickTarget();
    if (!chosen) return;
    const target: RecordTarget = chosen.target;
    // The trigger is recorded once, in a ring of its own, even if it is also one of the chosen events.
    const all = specs.includes(trigger) ? specs : [...specs, trigger];
    const events = await resolveForTarget(all, chosen);
    noticeSilentBreakpoints([events[all.indexOf(trigger)]], log);
    const session = await sessions.startRecording({
      events,
      target,
      pages: s.pages,
      label: `snapshot when ${trigger}: ${specs.join(', ')}`,
      triggers: { eventIndices: [all.indexOf(trigger)], postSec: 0, minIntervalSec: 1 },
    });
    log(`recording ${session.label} (${session.id}); a snapshot is taken each time ${trigger} fires`);
  };

  context.subscriptions.push(
    // An argument (from the timeline) is only a suggestion, and only a string is taken: a menu may pass anything.
    registerCommand(services, 'ringside.snapshotWhen', (suggested?: unknown) => snapshotWhen(undefined, typeof suggested === 'string' ? suggested : undefined)),
    registerCommand(services, 'ringside.snapshotWhenLineRuns', async (arg?: { lineNumber?: number; uri?: vscode.Uri }) => {
      const editor = vscode.window.activeTextEditor;
      const uri = arg?.uri ?? editor?.document.uri;
      const line = arg?.lineNumber ?? (editor ? editor.selection.active.line + 1 : undefined);
      if (!uri || !line) throw new Error('right-click a line number in a C/C++ file');
      await snapshotWhen(lineBreakpointSpec(path.basename(uri.fsPath), line));
    }),
    registerCommand(services, 'ringside.startRecording', () => startRecording(false)),
    registerCommand(services, 'ringside.startKeptRecording', () => startRecording(true)),
    registerCommand(services, 'ringside.captureSnapshot', () => captureFromPalette()),
    registerCommand(services, 'ringside.snapshotSession', (node: SessionNode) => capture(sessionIdOf(node))),
    registerCommand(services, 'ringside.stopRecording', async () => {
      const live = sessions.list().filter((s) => s.state !== 'stopped');
      if (live.length === 0) throw new Error('no recording is running');
      // Every one picked is stopped, even when one of them fails; the first failure is then reported.
      const failures: unknown[] = [];
      for (const id of await pickRecordingsToStop(live)) await sessions.stop(id).catch((error: unknown) => failures.push(error));
      if (failures.length > 0) throw failures[0];
    }),
    registerCommand(services, 'ringside.pauseSession', (node: SessionNode) => sessions.pause(sessionIdOf(node))),
    registerCommand(services, 'ringside.resumeSession', (node: SessionNode) => sessions.resume(sessionIdOf(node))),
    registerCommand(services, 'ringside.stopSession', (node: SessionNode) => sessions.stop(sessionIdOf(node))),
    registerCommand(services, 'ringside.removeSession', (node: SessionNode) => sessions.remove(sessionIdOf(node))),
  );
}
