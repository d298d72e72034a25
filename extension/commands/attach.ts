// Rings Ringside did not open: Attach to Event… (a keeper, another process's perf event fd, a persistent PMU
// event) and Stop Keeper.

import * as vscode from 'vscode';
import type { KeeperState } from '../../native/keeper/state';
import { DEFAULT_RING_PAGES } from '../../native/perf/ring-sizing';
import { borrowForeignRingAsking, scanPerfFds, type ForeignPerfFd } from '../../native/attach/foreign';
import { AttachCancelledError } from '../../native/perf/borrowed';
import { attachPersistentEvent, listPersistentEvents } from '../session/persistent-events';
import { noticeKeptSilentBreakpoints } from '../ui/breakpoint-notice';
import { askWhichEvent } from '../ui/pickers';
import { registerCommand, settings, type Services } from '../services';

export function registerAttachCommands(context: vscode.ExtensionContext, services: Services): void {
  const { sessions, keepers, backend, log } = services;
  context.subscriptions.push(
    registerCommand(services, 'ringside.attachToEvent', async () => {
      const kept = keepers.list().filter((k) => k.state && k.alive);
      const foreign = scanPerfFds().filter((fd) => !kept.some((k) => k.state?.pid === fd.pid));
      const persistent = listPersistentEvents();
      type AttachItem = vscode.QuickPickItem & { keeper?: KeeperState; foreign?: ForeignPerfFd; persistentSpec?: string; unavailable?: boolean };
      const items: AttachItem[] = [
        ...kept.map((k) => ({
          label: `$(lock) keeper ${k.state!.pid}`,
          description: k.state!.events.map((e) => e.name).join(', '),
          detail: `started ${k.state!.startedAt} · ${k.state!.rings.length} ring(s)`,
          keeper: k.state!,
        })),
        ...foreign.map((fd) => ({
          label: `$(plug) ${fd.comm} (pid ${fd.pid}) fd ${fd.fd}`,
          description: fd.mappedPages.length ? `rings of ${fd.mappedPages.join('/')} pages` : 'no ring mapped',
          detail: fd.cmdline,
          foreign: fd,
        })),
        ...persistent.events.map((event) => ({
          label: `$(database) ${event.spec}`,
          description: `persistent PMU event · ${event.terms}`,
          detail: 'the kernel keeps its buffer; Ringside maps it read-only on every CPU',
          persistentSpec: event.spec,
        })),
      ];
      if (items.length === 0)
        throw new Error(
          `no keeper, no process with perf event fds and no persistent PMU event is visible (start a kept recording, or run e.g. perf record --overwrite). Persistent events: ${persistent.none ?? 'none'}`,
        );
      // Say plainly when this kernel has no persistent events, instead of just leaving them out.
      if (persistent.none) items.push({ label: '$(info) No persistent PMU events here', description: '', detail: persistent.none, unavailable: true });
      // Kept open when focus moves: attaching is what one does right after a window reload, while the
      // restored timeline panel loads and takes focus (which closed the list before it could be used).
      const picked = await vscode.window.showQuickPick(items, {
        title: 'Ringside: attach to',
        matchOnDetail: true,
        matchOnDescription: true,
        ignoreFocusOut: true,
      });
      if (!picked || picked.unavailable) return;
      if (picked.persistentSpec) {
        const source = attachPersistentEvent(picked.persistentSpec, {
          pages: settings().pages ?? DEFAULT_RING_PAGES,
          warmCopyBuffers: settings().warmCopyBuffers,
        });
        sessions.adopt('borrowed', picked.persistentSpec, source);
        log(`attached to persistent event ${picked.persistentSpec} on ${source.ringStats().length} CPU(s), read-only`);
        return;
      }
      if (picked.keeper) {
        // A keeper this window already reads (re-attached after a reload, say) gets no second session: Capture
        // Snapshot would then ask which of two identical ones to take.
        const attached = attachedKeeperSession(sessions.list(), picked.keeper.pid);
        if (attached) {
          void vscode.window.showInformationMessage(`Ringside: ${attached.label} is attached already; Capture Snapshot takes its rings.`);
          return;
        }
        noticeKeptSilentBreakpoints(picked.keeper.limitations, log);
        await sessions.attachKeeper(picked.keeper);
        return;
      }
      const owner = picked.foreign;
      if (owner) {
        // Without the owner's perf.data header Ringside cannot know the event: it asks (raw records is one answer).
        let info: Awaited<ReturnType<typeof borrowForeignRingAsking>>;
        try {
          info = await borrowForeignRingAsking(owner.pid, owner.fd, {
            ask: askWhichEvent,
            resolveSpec: async (spec) => (await backend.resolveEvents([spec], { pid: owner.pid }))[0],
            warmCopyBuffers: settings().warmCopyBuffers,
          });
        } catch (error) {
          if (error instanceof AttachCancelledError) return log(error.message);
          throw error;
        }
        sessions.adopt('borrowed', `${owner.comm} ${owner.pid} fd ${owner.fd}`, info.source);
        log(info.explanation);
        void vscode.window.showInformationMessage(`Ringside: ${info.explanation}`);
      }
    }),
    registerCommand(services, 'ringside.stopKeeper', async () => {
      const kept = keepers.list().filter((k) => k.state && k.alive);
      if (kept.length === 0) throw new Error('no keeper is running');
      const picked = await vscode.window.showQuickPick(
        kept.map((k) => ({ label: `keeper ${k.state!.pid}`, description: k.state!.events.map((e) => e.name).join(', '), state: k.state! })),
        { title: 'Stop which keeper?' },
      );
      if (!picked) return;
      for (const session of sessions.list().filter((s) => s.kind === 'keeper' && s.label.startsWith(`keeper ${picked.state.pid}:`)))
        await sessions.stop(session.id);
      await keepers.stop(picked.state);
      log(`keeper ${picked.state.pid} stopped`);
    }),
  );
}

/**
 * After a window reload (or in a new window) the kept recordings an editor started are shown again: each live one is
 * attached as Start Kept Recording attached it, with the same warnings. A keeper that cannot be attached (it exited
 * meanwhile) is said in the output, not as an error: nothing was asked.
 */
export async function reattachKeepers(services: Services): Promise<void> {
  const { sessions, keepers, log } = services;
  try {
    for (const state of keepers.startedFromEditor()) {
      if (attachedKeeperSession(sessions.list(), state.pid)) continue;
      try {
        noticeKeptSilentBreakpoints(state.limitations, log);
        const session = await sessions.attachKeeper(state);
        log(`attached again to ${session.label} (started ${state.startedAt})`);
      } catch (error) {
        log(`cannot attach again to keeper ${state.pid}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  } finally {
    // The Sessions view's "No recording yet." waits for this (package.json viewsWelcome): until the kept recordings
    // were looked for, it says so instead (a reloaded window's extension host can take seconds to get here).
    await vscode.commands.executeCommand('setContext', SESSIONS_KNOWN, true);
  }
}

/** The context key set once the kept recordings of earlier windows were looked for and attached. */
export const SESSIONS_KNOWN = 'ringside.sessionsKnown';

/** The live session of this window that reads keeper `pid`'s rings, if any (its label is "keeper PID: events"). */
function attachedKeeperSession<S extends { readonly kind: string; readonly state: string; readonly label: string }>(
  sessions: readonly S[],
  pid: number,
): S | undefined {
  return sessions.find((session) => session.kind === 'keeper' && session.state !== 'stopped' && session.label.startsWith(`keeper ${pid}:`));
}
