// The warning a user gets when arming hardware breakpoints on a machine that accepts them and never
// delivers their hits (a hypervisor that does not virtualize the debug registers): said at once,
// instead of a hit count that stays 0 as if the code never ran.

import * as vscode from 'vscode';
import type { ResolvedEvent } from '../../native/abi/snapshot';
import { breakpointDelivery, isSilentBreakpointsMessage } from '../../native/perf/breakpoint-delivery';

export function noticeSilentBreakpoints(events: readonly ResolvedEvent[], log: (line: string) => void): void {
  if (!events.some((event) => event.isBreakpoint)) return;
  const delivery = breakpointDelivery();
  if (delivery.state !== 'silent') return;
  log(delivery.message);
  void vscode.window.showWarningMessage(`Ringside: ${delivery.message}`);
}

/**
 * The same warning for a kept recording, started or attached: its keeper (another process on this machine) probed
 * delivery itself and published the verdict among its limitations.
 */
export function noticeKeptSilentBreakpoints(limitations: readonly string[] | undefined, log: (line: string) => void): void {
  const message = limitations?.find(isSilentBreakpointsMessage);
  if (message === undefined) return;
  log(message);
  void vscode.window.showWarningMessage(`Ringside: ${message}`);
}
