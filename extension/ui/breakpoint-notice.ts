// The warning a user gets when arming hardware breakpoints on a machine that accepts them and never
// delivers their hits (a hypervisor that does not virtualize the debug registers): said at once,
// instead of a hit count that stays 0 as if the code never ran.

import * as vscode from 'vscode';
import type { ResolvedEvent } from '../../native/abi/snapshot';
import { breakpointDelivery } from '../../native/perf/breakpoint-delivery';

export function noticeSilentBreakpoints(events: readonly ResolvedEvent[], log: (line: string) => void): void {
  if (!events.some((event) => event.isBreakpoint)) return;
  const delivery = breakpointDelivery();
  if (delivery.state !== 'silent') return;
  log(delivery.message);
  void vscode.window.showWarningMessage(`Ringside: ${delivery.message}`);
}
