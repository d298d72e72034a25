// Quick picks of Start Recording and Attach to Event: events grouped by kind (software,
// tracepoints with fuzzy search over all of tracefs, breakpoints, PMUs incl. persistent),
// multi-select remembered per workspace; targets (launch, running process, whole system).

import { readdirSync, readFileSync } from 'node:fs';
import * as vscode from 'vscode';
import { listEvents } from '../../native/specs/list';
import { PARANOID_SYSCTL, paranoidText, readPerfAccess } from '../../native/sys/access';
import type { RecordTarget } from '../session/ports';
import type { EventAnswer, UnknownEventQuestion } from '../../native/attach/foreign';

const REMEMBERED_EVENTS = 'ringside.lastEvents';

interface EventPick extends vscode.QuickPickItem {
  readonly spec?: string;
}

export async function pickEvents(state: vscode.Memento, defaults: readonly string[]): Promise<string[] | undefined> {
  const list = listEvents();
  const access = readPerfAccess();
  const remembered = new Set(state.get<string[]>(REMEMBERED_EVENTS) ?? defaults);
  const items: EventPick[] = [];
  const section = (label: string) => items.push({ label, kind: vscode.QuickPickItemKind.Separator });
  section(access.mayRecordKernel ? 'Software' : `Software (user space only: ${paranoidText(access)})`);
  for (const event of list.software)
    items.push({ label: event.name, description: event.aliases.join(', '), spec: event.name, picked: remembered.has(event.name) });
  section(
    list.tracepointsError
      ? `Tracepoints (unavailable: ${list.tracepointsError})`
      : access.mayRecordKernel
        ? `Tracepoints (${list.tracepoints.length})`
        : `Tracepoints (${list.tracepoints.length}; not recordable as you: they fire in the kernel, which needs ${PARANOID_SYSCTL} <= 1 or CAP_PERFMON, and it is ${access.paranoid ?? 'unreadable'})`,
  );
  for (const tp of list.tracepoints) {
    const spec = `${tp.system}:${tp.name}`;
    items.push({ label: spec, description: `id ${tp.id}`, spec, picked: remembered.has(spec) });
  }
  section('Hardware breakpoints (type a spec in the box)');
  for (const bp of list.breakpoints) items.push({ label: bp.syntax, detail: bp.description, alwaysShow: false });
  section(
    list.pmus.some((pmu) => pmu.persistent)
      ? 'PMUs (persistent ones marked)'
      : 'PMUs (this kernel has no persistent PMU: use a kept recording for events that outlive the editor)',
  );
  for (const pmu of list.pmus) {
    for (const event of pmu.events) {
      const spec = `${pmu.name}/${event.name}/`;
      items.push({ label: spec, description: `${pmu.persistent ? 'persistent · ' : ''}${event.terms}`, spec, picked: remembered.has(spec) });
    }
  }
  // Specs remembered but not in the lists (breakpoints, custom PMU terms) stay selectable.
  for (const spec of remembered) if (!items.some((item) => item.spec === spec)) items.unshift({ label: spec, description: 'custom', spec, picked: true });

  const pick = vscode.window.createQuickPick<EventPick>();
  pick.title = 'Ringside: events to record';
  pick.placeholder = 'Fuzzy search software events, every tracefs tracepoint, PMUs; type a spec such as mem:counter:w and press Enter';
  pick.canSelectMany = true;
  pick.matchOnDescription = true;
  pick.items = items;
  pick.selectedItems = items.filter((item) => item.picked && item.spec);
  const chosen = await new Promise<string[] | undefined>((resolve) => {
    pick.onDidAccept(() => {
      const specs = pick.selectedItems.map((item) => item.spec).filter((spec): spec is string => !!spec);
      // In the order the settings (or the last choice) list them, then what was ticked now: the list puts typed-in specs
      // on top, yet the first event is the one that owns the shared rings and leads the recording's name.
      const order = [...remembered];
      const rank = (spec: string) => {
        const at = order.indexOf(spec);
        return at < 0 ? order.length : at;
      };
      specs.sort((a, b) => rank(a) - rank(b));
      // A typed spec that matches nothing is taken as is (breakpoints, raw PMU terms).
      if (specs.length === 0 && pick.value.trim()) specs.push(...pick.value.trim().split(/\s*,\s*/));
      resolve(specs.length ? specs : undefined);
      pick.hide();
    });
    pick.onDidHide(() => resolve(undefined));
    pick.show();
  });
  pick.dispose();
  if (chosen) await state.update(REMEMBERED_EVENTS, chosen);
  return chosen;
}

export interface ProcessEntry {
  readonly pid: number;
  readonly comm: string;
  readonly cmdline: string;
}

export function listProcesses(): ProcessEntry[] {
  const entries: ProcessEntry[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const comm = readFileSync(`/proc/${name}/comm`, 'utf8').trim();
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
      entries.push({ pid: Number(name), comm, cmdline });
    } catch {
      // exited while listing
    }
  }
  return entries.sort((a, b) => b.pid - a.pid);
}

export interface LaunchDefaults {
  readonly program?: string;
  readonly args: readonly string[];
  readonly cwd?: string;
}

/** ringside.launch.* settings, else the first launch configuration with a program. */
export function launchDefaults(): LaunchDefaults {
  const config = vscode.workspace.getConfiguration('ringside');
  const program = config.get<string>('launch.program');
  const folder = vscode.workspace.workspaceFolders?.[0];
  const substitute = (text: string) => (folder ? text.replace(/\$\{workspaceFolder\}/g, folder.uri.fsPath) : text);
  if (program)
    return { program: substitute(program), args: (config.get<string[]>('launch.args') ?? []).map(substitute), ...(folder ? { cwd: folder.uri.fsPath } : {}) };
  const launch = vscode.workspace.getConfiguration('launch', folder?.uri).get<{ program?: string; args?: string[]; cwd?: string }[]>('configurations') ?? [];
  const first = launch.find((c) => typeof c.program === 'string');
  if (first?.program)
    return {
      program: substitute(first.program),
      args: (first.args ?? []).map(substitute),
      cwd: first.cwd ? substitute(first.cwd) : folder?.uri.fsPath,
    };
  return { args: [], ...(folder ? { cwd: folder.uri.fsPath } : {}) };
}

/** Splits a command line on spaces, honouring simple quotes. */
export function splitCommandLine(text: string): string[] {
  const words: string[] = [];
  for (const match of text.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)) words.push(match[1] ?? match[2] ?? match[3]);
  return words;
}

export async function pickTarget(): Promise<{ target: RecordTarget; executable?: string } | undefined> {
  const defaults = launchDefaults();
  const access = readPerfAccess();
  const choice = await vscode.window.showQuickPick(
    [
      {
        label: '$(play) Launch a program',
        detail: defaults.program ? `${defaults.program} ${defaults.args.join(' ')}` : 'set ringside.launch.program or a launch configuration to skip typing',
        id: 'launch' as const,
      },
      { label: '$(debug-alt) A running process', detail: 'pick from every process: pid, comm and command line', id: 'pid' as const },
      {
        label: '$(server) Whole system, per CPU',
        detail: access.mayRecordCpuWide
          ? 'one ring per CPU'
          : `not as you: needs ${PARANOID_SYSCTL} <= 0 or CAP_PERFMON (${paranoidText(access)}); your own programs and processes work`,
        id: 'cpus' as const,
      },
    ],
    { title: 'Ringside: record what?' },
  );
  if (!choice) return undefined;
  if (choice.id === 'cpus') return { target: { kind: 'cpus' } };
  if (choice.id === 'pid') {
    const processes = listProcesses().filter((p) => p.pid !== process.pid);
    const picked = await vscode.window.showQuickPick(
      processes.map((p) => ({ label: `${p.pid}  ${p.comm}`, detail: p.cmdline, pid: p.pid })),
      { title: 'Ringside: process to record', matchOnDetail: true },
    );
    return picked ? { target: { kind: 'pid', pid: picked.pid } } : undefined;
  }
  const commandLine = await vscode.window.showInputBox({
    title: 'Ringside: program and arguments',
    value: defaults.program ? [defaults.program, ...defaults.args].map((w) => (/\s/.test(w) ? `"${w}"` : w)).join(' ') : '',
    prompt: 'The program starts with the rings already recording (and ASLR off, so breakpoints land at predicted addresses)',
  });
  if (!commandLine?.trim()) return undefined;
  const argv = splitCommandLine(commandLine.trim());
  return { target: { kind: 'launch', argv, ...(defaults.cwd ? { cwd: defaults.cwd } : {}) }, executable: argv[0] };
}

/**
 * The "which event is it?" question for a borrowed fd whose attr cannot be read anywhere: raw
 * records first, then software events, PMU events and every tracepoint, grouped and fuzzy-searchable.
 */
export async function askWhichEvent(question: UnknownEventQuestion): Promise<EventAnswer | undefined> {
  const items: (vscode.QuickPickItem & { answer?: EventAnswer })[] = [];
  let group: string | undefined;
  for (const choice of question.choices) {
    if (choice.group !== group) {
      group = choice.group;
      items.push({ label: group, kind: vscode.QuickPickItemKind.Separator });
    }
    items.push({ label: choice.label, detail: choice.detail, answer: choice.answer });
  }
  const picked = await vscode.window.showQuickPick(items, {
    title: `Ringside: which event is fd ${question.fd} of ${question.comm || 'pid'} (${question.pid})?`,
    placeHolder: question.why,
    matchOnDetail: true,
    ignoreFocusOut: true,
  });
  return picked?.answer;
}

/**
 * The recordings Stop Recording stops: the one that runs, else what the user picks from a list whose first
 * entry is all of them (several recordings are usual: a launched program, a kept one, an attached event).
 */
export async function pickRecordingsToStop(live: readonly { readonly id: string; readonly label: string; readonly state: string }[]): Promise<string[]> {
  if (live.length <= 1) return live.map((session) => session.id);
  const picked = await vscode.window.showQuickPick(
    [
      { label: `$(debug-stop) All ${live.length} recordings`, ids: live.map((session) => session.id) },
      ...live.map((session) => ({ label: session.label, description: session.state, ids: [session.id] })),
    ],
    { title: 'Stop which recording?' },
  );
  return picked ? picked.ids : [];
}
