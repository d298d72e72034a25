// Where a line's probe goes when the user arms one from the editor: the running process of the active
// session when there is one (a line armed while a program is being recorded probes that program), and
// what the resolver needs to know of it. Shared by Record Hits on This Line (editor-integration.ts) and
// Log Values at This Line (logpoints.ts).

import { readlinkSync } from 'node:fs';
import type { SessionManager } from '../session/session-manager';
import type { RecordTarget } from '../session/ports';

/** A target to record and, where known, its executable (whose DWARF names the line's addresses). */
export interface ChosenTarget {
  readonly target: RecordTarget;
  readonly executable?: string;
}

/** The active session's running process, or undefined when there is none (no session, a target that exited). */
export function activeSessionTarget(manager: Pick<SessionManager, 'active'>): ChosenTarget | undefined {
  const active = manager.active();
  const pid = active?.childPid;
  if (!pid || active.targetExited) return undefined;
  try {
    return { target: { kind: 'pid', pid }, executable: readlinkSync(`/proc/${pid}/exe`) };
  } catch {
    // The process exited between the check and the read: there is no running target to offer.
    return undefined;
  }
}

/** What resolving a spec on `chosen` needs: the pid of a running process and the executable its lines are in. */
export function resolveContextOf(chosen: ChosenTarget): { pid?: number; executable?: string } {
  const executable = chosen.executable ?? (chosen.target.kind === 'pid' ? readlinkSync(`/proc/${chosen.target.pid}/exe`) : undefined);
  return { ...(chosen.target.kind === 'pid' ? { pid: chosen.target.pid } : {}), ...(executable ? { executable } : {}) };
}
