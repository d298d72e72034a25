// The debug-register budget and the kernel's admission rule for breakpoints (kernel/events/hw_breakpoint.c,
// "hw-breakpoints: rewrite on top of perf events"), used to explain an ENOSPC in plain words.
//
// With HBP_NUM registers per CPU, per CPU (or the worst CPU for a breakpoint on every CPU):
//   flexible (non-pinned): nr_flexible > 0  ||  cpu_pinned + max_task_pinned < HBP_NUM
//       (flexible breakpoints share a register by rotation, so if one already exists, another fits)
//   pinned:                (nr_flexible > 0 ? 1 : 0) + cpu_pinned + max_task_pinned < HBP_NUM
//       (when flexible breakpoints exist, one register stays reserved for them)

import type { WatchBudget } from '../shared/protocol';

export function breakpointFits(budget: WatchBudget, pinned: boolean): boolean {
  const pinnedUse = budget.cpuPinned + budget.maxTaskPinned;
  if (!pinned) return budget.flexible > 0 || pinnedUse < budget.total;
  return (budget.flexible > 0 ? 1 : 0) + pinnedUse < budget.total;
}

/** Why the kernel refused (or would refuse) one more breakpoint; empty when it would fit. */
export function explainEnospc(budget: WatchBudget, pinned: boolean): string {
  const registers = `${budget.total} debug registers per CPU`;
  const taken = `${budget.cpuPinned} pinned per-CPU + ${budget.maxTaskPinned} pinned by the busiest task`;
  if (breakpointFits(budget, pinned)) {
    return (
      `The counts shown leave a register free on this CPU (${taken}, ${budget.flexible} flexible, of ${registers}), ` +
      'so the refusal came from elsewhere: for a breakpoint on every CPU the kernel checks the busiest CPU, and for a task ' +
      'it counts the pinned breakpoints that task already has.'
    );
  }
  if (pinned) {
    const reserved = budget.flexible > 0 ? ', plus 1 register kept for the flexible breakpoints' : '';
    return (
      `No debug register free (ENOSPC): a pinned breakpoint needs ${taken}${reserved} to stay below the ${registers}. ` +
      'Remove one (a disabled breakpoint keeps its register: the kernel reserves it when the breakpoint is opened), ' +
      'or make this one flexible (not pinned): flexible breakpoints take turns on one register.'
    );
  }
  return (
    `No debug register free (ENOSPC): ${taken} already use all ${registers}, and no flexible breakpoint holds a ` +
    'register to share. Remove a pinned breakpoint: disabling one does not free its register, the kernel reserves it ' +
    'for as long as the breakpoint is open.'
  );
}
