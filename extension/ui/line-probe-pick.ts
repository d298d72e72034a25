// The gutter's question before Record Hits on This Line: which kernel mechanism counts the line. Auto (the
// default, first) follows native/specs/line-probe.ts; the other two are what a user picks knowingly.

import * as vscode from 'vscode';
import type { LineProbeMode } from '../../native/specs/line-probe';

export const LINE_PROBE_PICK_TITLE = "Ringside: count this line's hits with…";

const CHOICES: readonly (vscode.QuickPickItem & { readonly mode: LineProbeMode })[] = [
  {
    mode: 'auto',
    label: 'auto',
    description: 'default',
    detail: 'a hardware breakpoint, or uprobes where breakpoints do not fire on this machine or the 4 debug registers are taken',
  },
  {
    mode: 'breakpoint',
    label: 'hardware breakpoint',
    description: 'mem:FILE:LINE:x',
    detail: 'one of the 4 debug registers per place of the line; sees nothing on a host that does not deliver breakpoints',
  },
  {
    mode: 'uprobe',
    label: 'uprobe',
    description: 'line:FILE:LINE',
    detail: "the kernel's uprobes on every address of the line: no register limit; needs CAP_PERFMON (or root)",
  },
];

/** The mechanism picked (Enter takes auto), or undefined when the pick was dismissed. */
export async function pickLineProbeMode(): Promise<LineProbeMode | undefined> {
  const picked = await vscode.window.showQuickPick(CHOICES, { title: LINE_PROBE_PICK_TITLE });
  return picked?.mode;
}
