// Progress for work that may take long (opening a perf.data, capturing and decoding a snapshot): nothing for work
// that ends within a second, a cancellable notification naming the current step for work that goes on longer. The
// work gets a `cancelled()` check: it stops at its next step boundary (reading, decoding and symbolizing are each one
// step that cannot be interrupted half-way), and whatever it made so far is dropped.

import * as vscode from 'vscode';

/** Shown when a notification would flash: work shorter than this gets none. */
export const PROGRESS_AFTER_MS = 1000;

export interface ProgressSink {
  /** Names the step under way. */
  step(message: string): void;
  /** Whether the user cancelled. */
  cancelled(): boolean;
}

export async function withProgressAfterASecond<T>(title: string, work: (progress: ProgressSink) => Promise<T>, cancellable = true): Promise<T> {
  let cancelled = false;
  let message: string | undefined;
  let report: ((message: string) => void) | undefined;
  const sink: ProgressSink = {
    step: (m) => {
      message = m;
      report?.(m);
    },
    cancelled: () => cancelled,
  };
  const running = work(sink);
  let settled = false;
  const timer = setTimeout(() => {
    if (settled) return;
    void vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title, cancellable }, (progress, token) => {
      report = (m) => progress.report({ message: m });
      if (message !== undefined) report(message);
      token.onCancellationRequested(() => {
        cancelled = true;
      });
      return running.then(
        () => undefined,
        () => {
          // the notification only ends with the work: the caller awaits `running` below and reports its failure
        },
      );
    });
  }, PROGRESS_AFTER_MS);
  try {
    return await running;
  } finally {
    settled = true;
    clearTimeout(timer);
  }
}
