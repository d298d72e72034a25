// Notices of triggered snapshots ("Snapshot When…"), coalesced: a trigger that fires every second must not raise a
// toast every second. The first snapshot a session's trigger takes opens one notice; each later one updates it in place
// with a count ("3 snapshots taken; the last: …") while it stays open; once the user closes it, later snapshots only go
// to the log and the Sessions view until the session stops (its next recording gets a notice again). No vscode here:
// the notice comes in as a callback (views.ts opens it as a cancellable progress notification), so this is testable.

/** One open notice: its text updated in place; `closed` once the user dismissed it. */
export interface Notice {
  update(message: string): void;
  close(): void;
  readonly closed: boolean;
}

interface SessionNotices {
  count: number;
  notice: Notice | null;
  /** The user closed the notice: stay quiet for this session. */
  muted: boolean;
}

export class TriggerNotices {
  private readonly sessions = new Map<string, SessionNotices>();

  /** `open(title)` shows a notice titled `title` (the session's). */
  constructor(private readonly open: (title: string) => Notice) {}

  /** A trigger of session `sessionId` (labelled `label`) took a snapshot, described by `message`. */
  triggered(sessionId: string, label: string, message: string): void {
    let entry = this.sessions.get(sessionId);
    if (!entry) {
      entry = { count: 0, notice: null, muted: false };
      this.sessions.set(sessionId, entry);
    }
    entry.count++;
    if (entry.notice?.closed) {
      entry.notice = null;
      entry.muted = true;
    }
    if (entry.muted) return;
    if (!entry.notice) entry.notice = this.open(`Ringside: ${label}`);
    entry.notice.update(entry.count === 1 ? message : `${entry.count} snapshots taken; the last: ${message}`);
  }

  /** How many snapshots the session's trigger took so far. */
  count(sessionId: string): number {
    return this.sessions.get(sessionId)?.count ?? 0;
  }

  /** The session stopped or was removed: its notice closes, and its count starts again with the next recording. */
  ended(sessionId: string): void {
    this.sessions.get(sessionId)?.notice?.close();
    this.sessions.delete(sessionId);
  }

  dispose(): void {
    for (const id of [...this.sessions.keys()]) this.ended(id);
  }
}
