// Progress for work that may take long (opening a perf.data, capturing, decoding and naming a snapshot): nothing for
// work that ends within a second, a cancellable notification naming the current step for work that goes on longer,
// and, given a `panel`, the same steps and a Cancel in the timeline page (which shows them after a second too). Both
// Cancels cancel one token. The work gets a `cancelled()` check: it stops at its next step boundary (reading, decoding
// and symbolizing are each one step that cannot be interrupted half-way), and whatever it made so far is dropped;
// `onCancelled` lets it drop at once what it already handed on (a snapshot whose names are still being resolved).

import * as vscode from 'vscode';

/** Shown when a notification would flash: work shorter than this gets none. */
export const PROGRESS_AFTER_MS = 1000;

export interface ProgressSink {
  /** Names the step under way. */
  step(message: string): void;
  /** Whether the user cancelled. */
  cancelled(): boolean;
  /** Calls `listener` when the user cancels (at once if they did). */
  onCancelled(listener: () => void): { dispose(): void };
}

/** Where else the work is shown: the timeline panel (TimelinePanel.beginTask), with a Cancel of its own. */
export interface ProgressPanel {
  beginTask(title: string, cancel: () => void): { step(text: string): void; end(): void };
}

export interface ProgressOptions {
  /** Offer Cancel (default true). */
  readonly cancellable?: boolean;
  /** Show the notification at once instead of after a second (work known to be long, a big snapshot). */
  readonly immediately?: boolean;
  /** Show the steps in the timeline panel too, with a Cancel sharing the notification's token. */
  readonly panel?: ProgressPanel;
}

export async function withProgressAfterASecond<T>(title: string, work: (progress: ProgressSink) => Promise<T>, options: ProgressOptions = {}): Promise<T> {
  const cancellable = options.cancellable ?? true;
  // One cancellation for both Cancels (the notification's token and the panel's button).
  let cancelled = false;
  const listeners = new Set<() => void>();
  const cancel = () => {
    if (cancelled) return;
    cancelled = true;
    for (const listener of [...listeners]) listener();
  };
  let message: string | undefined;
  let report: ((message: string) => void) | undefined;
  const inPanel = options.panel?.beginTask(title.replace(/^Ringside: /, ''), cancel);
  const sink: ProgressSink = {
    step: (m) => {
      message = m;
      report?.(m);
      inPanel?.step(m);
    },
    cancelled: () => cancelled,
    onCancelled: (listener) => {
      if (cancelled) listener();
      else listeners.add(listener);
      return { dispose: () => listeners.delete(listener) };
    },
  };
  const running = work(sink);
  let settled = false;
  const timer = setTimeout(
    () => {
      if (settled) return;
      void vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title, cancellable }, (progress, token) => {
        report = (m) => progress.report({ message: m });
        if (message !== undefined) report(message);
        token.onCancellationRequested(cancel);
        return running.then(
          () => undefined,
          () => {
            // the notification only ends with the work: the caller awaits `running` below and reports its failure
          },
        );
      });
    },
    options.immediately ? 0 : PROGRESS_AFTER_MS,
  );
  try {
    return await running;
  } finally {
    settled = true;
    clearTimeout(timer);
    inPanel?.end();
    listeners.clear();
  }
}
