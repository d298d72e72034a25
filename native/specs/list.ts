// `ringside events [--json]`: what this machine offers, as data and as perf-list-like text.

import { SOFTWARE_EVENTS } from './parse';
import { listPmus, DEFAULT_SYSFS_ROOT } from './pmu';
import { findTracefs, listTracepoints, TracefsError } from './tracefs';

export interface EventList {
  readonly software: readonly { readonly name: string; readonly aliases: readonly string[]; readonly config: number }[];
  readonly tracepoints: readonly { readonly system: string; readonly name: string; readonly id: number }[];
  /** Why tracepoints are missing, when tracefs could not be found or mounted. */
  readonly tracepointsError?: string;
  readonly breakpoints: readonly { readonly syntax: string; readonly description: string }[];
  /** Execution counts by uprobes (root or CAP_PERFMON; present when the kernel has the uprobe PMU). */
  readonly uprobes: readonly { readonly syntax: string; readonly description: string }[];
  readonly pmus: readonly {
    readonly name: string;
    readonly type: number;
    readonly formats: readonly { readonly name: string; readonly format: string }[];
    readonly events: readonly { readonly name: string; readonly terms: string }[];
    readonly persistent?: boolean;
  }[];
  /** PMUs left out because their sysfs files are malformed (path: problem). */
  readonly pmuErrors?: readonly string[];
}

export interface ListOptions {
  readonly sysfsRoot?: string;
  readonly tracefsRoot?: string;
}

export const BREAKPOINT_SYNTAX: EventList['breakpoints'] = [
  { syntax: 'mem:0xADDR[/LEN][:ACCESS]', description: 'hardware watchpoint at an address; LEN 1, 2, 4 or 8 (default 4); ACCESS r, w, rw (default) or x' },
  {
    syntax: 'mem:SYMBOL[/LEN][:ACCESS]',
    description: 'a global/static variable of the target (length from its size, at most 8) or a function (execute breakpoint)',
  },
  { syntax: 'mem:FILE:LINE[:x]', description: 'execute breakpoint at the first instruction of a source line of the target (needs DWARF line info)' },
];

export const UPROBE_SYNTAX: EventList['uprobes'] = [
  {
    syntax: 'line:FILE:LINE',
    description:
      'every execution of a source line of the target: a uprobe on each address where a statement of it begins (all inlined copies), as perf probe FILE:LINE',
  },
  {
    syntax: 'uprobe:BIN:SYMBOL[+OFF]',
    description: 'every execution of one instruction of an executable or shared library (uprobe:/lib/x86_64-linux-gnu/libc.so.6:getppid)',
  },
];

export function listEvents(options: ListOptions = {}): EventList {
  let tracepoints: EventList['tracepoints'] = [];
  let tracepointsError: string | undefined;
  try {
    tracepoints = listTracepoints(findTracefs({ root: options.tracefsRoot }));
  } catch (error) {
    if (!(error instanceof TracefsError)) throw error;
    tracepointsError = error.message;
  }
  const pmuErrors: string[] = [];
  const pmus = listPmus(options.sysfsRoot ?? DEFAULT_SYSFS_ROOT, (error) => pmuErrors.push(error.message)).map((pmu) => ({
    name: pmu.name,
    type: pmu.type,
    formats: pmu.formats.map((format) => ({ name: format.name, format: format.text })),
    events: pmu.events.map((event) => ({ name: event.name, terms: event.text })),
    ...(pmu.persistent ? { persistent: true } : {}),
  }));
  return {
    software: SOFTWARE_EVENTS.map((event) => ({ name: event.name, aliases: [...event.aliases], config: event.config })),
    tracepoints,
    ...(tracepointsError ? { tracepointsError } : {}),
    breakpoints: BREAKPOINT_SYNTAX,
    uprobes: pmus.some((pmu) => pmu.name === 'uprobe') ? UPROBE_SYNTAX : [],
    pmus,
    ...(pmuErrors.length > 0 ? { pmuErrors } : {}),
  };
}

const COLUMN = 50;

/** perf list's `printf("  %-50s [%s]\n")`. */
function row(left: string, right: string): string {
  return `  ${left.padEnd(COLUMN)} [${right}]`;
}

/** The human form, laid out like `perf list`. */
export function formatEventList(list: EventList): string {
  const lines: string[] = ['List of pre-defined events (to be used in -e):', ''];
  for (const event of list.software) {
    lines.push(row([event.name, ...event.aliases].join(' OR '), 'Software event'));
  }
  lines.push('');
  for (const pmu of list.pmus) {
    for (const event of pmu.events) lines.push(row(`${pmu.name}/${event.name}/`, pmu.persistent ? 'Persistent PMU event' : 'Kernel PMU event'));
  }
  if (list.pmus.some((pmu) => pmu.events.length > 0)) lines.push('');
  for (const breakpoint of list.breakpoints) lines.push(row(breakpoint.syntax, 'Hardware breakpoint'));
  for (const uprobe of list.uprobes) lines.push(row(uprobe.syntax, 'Uprobe (root or CAP_PERFMON)'));
  lines.push('');
  for (const tracepoint of list.tracepoints) lines.push(row(`${tracepoint.system}:${tracepoint.name}`, 'Tracepoint event'));
  if (list.tracepointsError) lines.push(`  (no tracepoints: ${list.tracepointsError})`);
  lines.push('', 'PMUs (use as PMU/TERM=VALUE,.../ with the format terms below, or PMU/EVENT/):');
  for (const pmu of list.pmus) {
    const formats = pmu.formats.map((format) => `${format.name}=${format.format}`).join(', ');
    lines.push(`  ${pmu.name} (type ${pmu.type}${pmu.persistent ? ', persistent' : ''})${formats ? `: ${formats}` : ''}`);
  }
  for (const problem of list.pmuErrors ?? []) lines.push(`  (skipped a PMU: ${problem})`);
  lines.push(
    '',
    'Modifiers: EVENT:u (user), :k (kernel), :h (hypervisor), :G/:H (guest/host), :I (no idle), :p/:pp/:ppp (precise), :D (pinned), :e (exclusive)',
  );
  return `${lines.join('\n')}\n`;
}
