// Command-line parsing for `ringside`. Pure but for one stat (is -o a character device?), so every error message is unit tested.
// The grammar follows perf where perf has one (-e, -p, -a, -c, -F, -g, --) so muscle memory carries over.

import { isCharacterDevice } from '../sys/writable';
import type { AllCpusTarget } from '../perf/recorder-options';
import { isPowerOfTwo } from '../abi/units';
import { DEFAULT_CLOCK_FREQ, DEFAULT_DWARF_STACK_BYTES, MAX_DWARF_STACK_BYTES, type CallGraph } from '../specs/resolve';

/** How often --follow reads the rings when no interval is given: 4 reads a second. */
export const DEFAULT_FOLLOW_MS = 250;

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export type CaptureTarget = AllCpusTarget;

export type OutputFormat = 'jsonl' | 'perf.data' | 'html' | 'pprof';

export interface CaptureOptions {
  readonly command: 'capture' | 'keep';
  readonly events: readonly string[];
  readonly target: CaptureTarget;
  /** Data pages per ring (power of two); undefined: the recorder's default, fitted to the locked-memory budget. */
  readonly pages?: number;
  readonly period?: bigint;
  readonly freq?: number;
  /** -g / --call-graph: frame pointers, or DWARF unwinding of a copied user stack; undefined: no callchains. */
  readonly callGraph?: CallGraph;
  readonly durationSec?: number;
  readonly output?: string;
  readonly format: OutputFormat;
  readonly gapFree: boolean;
  readonly sideband: boolean;
  /** Keep a pre-faulted spare copy buffer per ring (RecorderOptions.warmCopyBuffers). */
  readonly warmCopy: boolean;
  readonly quiet: boolean;
  /** When the capture ends before the launched command (a signal, --duration), leave the command running. */
  readonly leaveRunning: boolean;
  /** Event specs whose every record triggers a snapshot into `snapshotDir` (the recorder re-arms). */
  readonly snapshotOn: readonly string[];
  /** A launched command killed by a signal (SIGSEGV, SIGABRT...) writes a snapshot into `snapshotDir`. */
  readonly snapshotOnExitSignal: boolean;
  /** Where triggered snapshots go, as numbered, timestamped perf.data files. */
  readonly snapshotDir?: string;
  /** Keep recording this long after a trigger before the snapshot (seconds). */
  readonly postSec: number;
  /** At least this long between two triggered snapshots (seconds). */
  readonly minIntervalSec: number;
  /** History wanted (seconds): rings grow until they keep this much (RecorderOptions.windowSec). */
  readonly windowSec?: number;
  /** --follow: JSON Lines of what the rings gain, every `intervalMs`, while the capture runs (capture only). */
  readonly follow?: { readonly intervalMs: number };
}

export interface EventsOptions {
  readonly command: 'events';
  readonly json: boolean;
}

export interface DecodeOptions {
  readonly command: 'decode';
  readonly input: string;
  readonly output?: string;
  readonly format: OutputFormat;
  /** Leave damaged records out of the output (counted on stderr and in the output's notes) instead of stopping at the first. */
  readonly keepGoing: boolean;
}

export interface HelpOptions {
  readonly command: 'help';
  /** `ringside SUB --help`: that subcommand's usage; undefined: the whole usage. */
  readonly topic?: CommandName;
}

/** `snapshot KEEPER_PID`: one snapshot of a running keeper's rings, without VS Code. */
export interface SnapshotOptions {
  readonly command: 'snapshot';
  readonly keeperPid: number;
  readonly output?: string;
  readonly format: OutputFormat;
  readonly quiet: boolean;
  /** Every side-band record the keeper spooled, not only what the kept samples need (see native/decode/sideband-prune). */
  readonly allSideband: boolean;
}

/** `list`: the keepers this user runs, with their rings. */
export interface ListOptions {
  readonly command: 'list';
  readonly json: boolean;
}

export type CliOptions = CaptureOptions | EventsOptions | DecodeOptions | HelpOptions | SnapshotOptions | ListOptions;

export type CommandName = 'events' | 'capture' | 'decode' | 'keep' | 'snapshot' | 'list';

const SPEC_HELP = `SPEC is perf's syntax: cpu-clock, task-clock, page-faults, context-switches, ... ; subsys:name (tracepoint);
mem:ADDR|SYMBOL|FILE:LINE[/LEN][:r|w|rw|x] (hardware breakpoint); line:FILE:LINE (every execution of a source line,
by uprobes: root or CAP_PERFMON); uprobe:BIN:SYMBOL[+OFF] (one instruction of an executable or library); pmu/term=value,.../;
modifiers :u :k :h.
Globs expand as perf's do: syscalls:sys_enter_* (tracefs), *:sched_switch, pmu_*/term/; one that matches nothing is an error.
cpu-clock and task-clock sample at ${DEFAULT_CLOCK_FREQ} Hz (perf's default; at most kernel.perf_event_max_sample_rate) unless -c or -F.
-g: callers by frame pointers; -g dwarf[,BYTES] (--call-graph dwarf): copies BYTES (8192) of user stack per sample
and unwinds it with the binaries' DWARF CFI, for code built without frame pointers.`;

const OUTPUT_HELP = `-o FILE: .jsonl (default stdout), .data (perf.data), .html (self-contained timeline page), .pb.gz (pprof: samples per
stack, for go tool pprof, Parca, Pyroscope); a character device such as /dev/null gets JSON Lines (everything is still
decoded and formatted: useful for timing).`;

const SYMBOL_CACHE_HELP = `--no-symbol-cache: neither read nor write the symbol cache (each object's function table and this boot's kallsyms,
kept in $XDG_CACHE_HOME/ringside or ~/.cache/ringside so the next run starts warm); RINGSIDE_NO_SYMBOL_CACHE=1 does the same.`;

const TRIGGER_HELP = `--snapshot-on SPEC: every record of SPEC (recorded with the others) writes a snapshot, --post SEC later,
to DIR/ringside-N-TIME.data (perf.data with the side-band needed to read it); at most one per --min-interval SEC (1).
--snapshot-on-exit-signal: when COMMAND is killed by a signal (SIGSEGV, SIGABRT...), also write one there.
--window SEC: the history wanted; rings that keep less are reopened larger (within the locked-memory budget).`;

const FOLLOW_HELP = `--follow[=MS]: stream JSON Lines to stdout while COMMAND runs, like \`tail -f\` of the rings: every MS (${DEFAULT_FOLLOW_MS} ms)
the records written since the previous read, read without pausing the rings; records a ring overwrote before they were read are
counted on stderr (give --pages more, or a shorter MS). SIGUSR2 reads at once.`;

/** Each subcommand's usage line(s) and the notes that concern it: `ringside SUB --help` prints one of these. */
export const COMMAND_USAGE: Readonly<Record<CommandName, string>> = {
  events: `usage: ringside events [--json]
Lists the events this machine offers (software, tracepoints, PMUs, breakpoints); --json for a machine-readable list.`,
  capture: `usage: ringside capture [-e SPEC]... (-p PID | -a | -- COMMAND [ARGS...])
                   [--pages N] [-c PERIOD | -F FREQ] [-g [fp|dwarf[,BYTES]]] [--duration SEC] [-o FILE] [--no-gap-free] [--no-sideband]
                   [--no-warm-copy] [--leave-running] [--window SEC] [--follow[=MS]] [--no-symbol-cache] [-q]
                   [--snapshot-on SPEC]... [--snapshot-on-exit-signal] [--snapshot-dir DIR] [--post SEC] [--min-interval SEC]
${SPEC_HELP}
${OUTPUT_HELP}
${FOLLOW_HELP}
${SYMBOL_CACHE_HELP}
capture snapshots when COMMAND exits, on SIGUSR2 (repeatable), and at the end: after --duration or on
SIGINT/SIGTERM/SIGHUP, which also end COMMAND and its process group (SIGTERM, then SIGKILL after 2 s) unless --leave-running.
Exit status: COMMAND's own (128+N if signal N killed it), 128+N if signal N ended the capture, else 0.
${TRIGGER_HELP}`,
  decode: `usage: ringside decode FILE.data [-o OUT] [--keep-going] [--no-symbol-cache]
Decodes a perf.data file (perf record's) to JSON Lines (stdout or OUT.jsonl), OUT.data, OUT.html or OUT.pb.gz (pprof).
${OUTPUT_HELP}
--keep-going: a damaged record is skipped (and counted, with the file offset of the first, on stderr and in the output's
summary) instead of ending the decode; damage that breaks the record framing ends it, keeping what came before.
${SYMBOL_CACHE_HELP}`,
  keep: `usage: ringside keep [-e SPEC]... (-p PID | -a | -- COMMAND [ARGS...]) [--pages N] [-c PERIOD | -F FREQ] [-g [fp|dwarf[,BYTES]]]
                [--window SEC] [--snapshot-on SPEC]... [--snapshot-on-exit-signal] [--snapshot-dir DIR] [--post SEC] [--min-interval SEC]
Holds flight-recorder rings until SIGTERM/SIGINT, for \`ringside snapshot\`, \`ringside list\` and VS Code to attach to.
${SPEC_HELP}
${TRIGGER_HELP}
A keeper publishes each resize as a new generation of its state file; snapshot, list and VS Code follow it.`,
  snapshot: `usage: ringside snapshot KEEPER_PID [-o FILE] [--all-sideband] [--no-symbol-cache] [-q]
One snapshot of a running keeper's rings (see ringside list), without pausing it for longer than the copy.
${OUTPUT_HELP}
--all-sideband: every side-band record the keeper spooled, not only what the kept samples need.
${SYMBOL_CACHE_HELP}`,
  list: `usage: ringside list [--json]
The keepers this user runs, with their rings, retired rings and resizes.`,
};

export const USAGE = `usage:
  ringside events [--json]
  ringside capture [-e SPEC]... (-p PID | -a | -- COMMAND [ARGS...])
                   [--pages N] [-c PERIOD | -F FREQ] [-g [fp|dwarf[,BYTES]]] [--duration SEC] [-o FILE] [--no-gap-free] [--no-sideband]
                   [--no-warm-copy] [--leave-running] [--window SEC] [--follow[=MS]] [--no-symbol-cache] [-q]
                   [--snapshot-on SPEC]... [--snapshot-on-exit-signal] [--snapshot-dir DIR] [--post SEC] [--min-interval SEC]
  ringside decode FILE.data [-o OUT] [--keep-going] [--no-symbol-cache]
  ringside keep [-e SPEC]... (-p PID | -a | -- COMMAND [ARGS...]) [--pages N] [-c PERIOD | -F FREQ] [-g [fp|dwarf[,BYTES]]] [--window SEC]
                [--snapshot-on SPEC]... [--snapshot-on-exit-signal] [--snapshot-dir DIR] [--post SEC] [--min-interval SEC]
  ringside snapshot KEEPER_PID [-o FILE] [--all-sideband] [--no-symbol-cache] [-q]
  ringside list [--json]
  ringside COMMAND --help     (that command's usage and notes)

${SPEC_HELP}
${OUTPUT_HELP}
capture snapshots when COMMAND exits, on SIGUSR2 (repeatable), and at the end: after --duration or on
SIGINT/SIGTERM/SIGHUP, which also end COMMAND and its process group (SIGTERM, then SIGKILL after 2 s) unless --leave-running.
Exit status: COMMAND's own (128+N if signal N killed it), 128+N if signal N ended the capture, else 0.
${TRIGGER_HELP}
A keeper publishes each resize as a new generation of its state file; snapshot, list and VS Code follow it.`;

function formatOf(file: string | undefined): OutputFormat {
  if (!file) return 'jsonl';
  if (/\.data$/i.test(file)) return 'perf.data';
  if (/\.html?$/i.test(file)) return 'html';
  if (/\.pb\.gz$/i.test(file)) return 'pprof';
  if (/\.jsonl?$/i.test(file) || file === '-') return 'jsonl';
  // perf script > /dev/null: the whole decode and formatting runs, the text goes nowhere.
  if (isCharacterDevice(file)) return 'jsonl';
  throw new UsageError(`-o ${file}: unknown output format; use a .jsonl, .data, .html or .pb.gz file name (or a device such as /dev/null)`);
}

function positiveInteger(flag: string, text: string | undefined): number {
  if (text === undefined) throw new UsageError(`${flag} needs a value`);
  if (!/^\d+$/.test(text) || Number(text) <= 0 || !Number.isSafeInteger(Number(text))) {
    throw new UsageError(`${flag} ${text}: expected a positive integer`);
  }
  return Number(text);
}

const COMMAND_NAMES = Object.keys(COMMAND_USAGE) as CommandName[];

function isCommandName(word: string | undefined): word is CommandName {
  return COMMAND_NAMES.includes(word as CommandName);
}

/** --help or -h among a subcommand's own options (not in a launched command's arguments after --). */
function asksForHelp(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end < 0 ? args : args.slice(0, end)).some((arg) => arg === '--help' || arg === '-h');
}

/** Commands that symbolize, and so take --no-symbol-cache. */
const SYMBOLIZING: readonly string[] = ['capture', 'decode', 'snapshot'];

/** The command line's options; `symbolCache: false` when --no-symbol-cache (any symbolizing command's own option) was given. */
export function parseArgs(argv: readonly string[]): CliOptions & { readonly symbolCache?: false } {
  const [command, ...rest] = argv;
  const end = rest.indexOf('--');
  const own = end < 0 ? rest : rest.slice(0, end);
  const at = own.indexOf('--no-symbol-cache');
  if (command === undefined || !SYMBOLIZING.includes(command) || at < 0) return parseCommand(argv);
  return { ...parseCommand([command, ...rest.slice(0, at), ...rest.slice(at + 1)]), symbolCache: false };
}

function parseCommand(argv: readonly string[]): CliOptions {
  const [command, ...rest] = argv;
  if (isCommandName(command) && asksForHelp(rest)) return { command: 'help', topic: command };
  switch (command) {
    case undefined:
    case '-h':
    case '--help':
      return { command: 'help' };
    case 'help':
      if (rest.length === 0) return { command: 'help' };
      if (rest.length === 1 && isCommandName(rest[0])) return { command: 'help', topic: rest[0] };
      throw new UsageError(`help ${rest.join(' ')}: expected one of ${COMMAND_NAMES.join(', ')}`);
    case 'events':
      return { command: 'events', json: parseJsonOnly(command, rest) };
    case 'decode':
      return parseDecode(rest);
    case 'capture':
    case 'keep':
      return parseCapture(command, rest);
    case 'snapshot':
      return parseSnapshot(rest);
    case 'list':
      return { command: 'list', json: parseJsonOnly(command, rest) };
    default:
      throw new UsageError(`unknown command '${command}' (expected events, capture, decode, keep, snapshot or list)`);
  }
}

/** Commands whose only option is --json. */
function parseJsonOnly(command: string, args: readonly string[]): boolean {
  let json = false;
  for (const arg of args) {
    if (arg === '--json') json = true;
    else throw new UsageError(`${command}: unknown option ${arg}`);
  }
  return json;
}

function parseSnapshot(args: readonly string[]): SnapshotOptions {
  let keeperPid: number | undefined;
  let output: string | undefined;
  let quiet = false;
  let allSideband = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '-o' || arg === '--output') {
      output = args[++i];
      if (output === undefined) throw new UsageError(`${arg} needs a file name`);
    } else if (arg === '-q' || arg === '--quiet') quiet = true;
    else if (arg === '--all-sideband') allSideband = true;
    else if (arg.startsWith('-')) throw new UsageError(`snapshot: unknown option ${arg}`);
    else if (keeperPid === undefined) keeperPid = positiveInteger('KEEPER_PID', arg);
    else throw new UsageError(`snapshot: unexpected argument ${arg}`);
  }
  if (keeperPid === undefined) throw new UsageError('snapshot needs the pid of a running `ringside keep` (see `ringside list`)');
  return { command: 'snapshot', keeperPid, output, format: formatOf(output), quiet, allSideband };
}

function parseDecode(args: readonly string[]): DecodeOptions {
  let input: string | undefined;
  let output: string | undefined;
  let keepGoing = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '-o' || arg === '--output') {
      output = args[++i];
      if (output === undefined) throw new UsageError(`${arg} needs a file name`);
    } else if (arg === '--keep-going') keepGoing = true;
    else if (arg.startsWith('-') && arg !== '-') throw new UsageError(`decode: unknown option ${arg}`);
    else if (input === undefined) input = arg;
    else throw new UsageError(`decode: unexpected argument ${arg}`);
  }
  if (!input) throw new UsageError('decode needs a perf.data file');
  return { command: 'decode', input, output, format: formatOf(output), keepGoing };
}

/** `fp`, `dwarf` or `dwarf,BYTES` (perf's --call-graph syntax; BYTES rounded up to 8 as perf does). */
function parseCallGraph(arg: string, text: string): CallGraph {
  const [mode, size, ...rest] = text.split(',');
  if (mode === 'fp' && size === undefined) return { mode: 'fp' };
  if (mode !== 'dwarf' || rest.length > 0) throw new UsageError(`${arg} ${text}: expected fp, dwarf or dwarf,BYTES`);
  if (size === undefined) return { mode: 'dwarf', stackBytes: DEFAULT_DWARF_STACK_BYTES };
  if (!/^\d+$/.test(size) || Number(size) === 0 || Number(size) > MAX_DWARF_STACK_BYTES) {
    throw new UsageError(`${arg} ${text}: the stack copy is 1 to ${MAX_DWARF_STACK_BYTES} bytes`);
  }
  return { mode: 'dwarf', stackBytes: Math.ceil(Number(size) / 8) * 8 };
}

function parseCapture(command: 'capture' | 'keep', args: readonly string[]): CaptureOptions {
  const events: string[] = [];
  let pid: number | undefined;
  let allCpus = false;
  let launch: string[] | undefined;
  let pages: number | undefined;
  let period: bigint | undefined;
  let freq: number | undefined;
  let callGraph: CallGraph | undefined;
  let durationSec: number | undefined;
  let output: string | undefined;
  let gapFree = true;
  let sideband = true;
  let warmCopy = true;
  let quiet = false;
  let leaveRunning = false;
  const snapshotOn: string[] = [];
  let snapshotOnExitSignal = false;
  let snapshotDir: string | undefined;
  let postSec = 0;
  let minIntervalSec = 1;
  let windowSec: number | undefined;
  let follow: { intervalMs: number } | undefined;
  const seconds = (arg: string, text: string, allowZero: boolean) => {
    const value = Number(text);
    if (!Number.isFinite(value) || value < 0 || (!allowZero && value === 0))
      throw new UsageError(`${arg} ${text}: expected ${allowZero ? 'a number of seconds >= 0' : 'a positive number of seconds'}`);
    return value;
  };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const value = () => {
      const next = args[++i];
      if (next === undefined) throw new UsageError(`${arg} needs a value`);
      return next;
    };
    if (arg === '--') {
      launch = args.slice(i + 1);
      if (launch.length === 0) throw new UsageError('-- must be followed by a command to launch');
      break;
    }
    if (arg === '-e' || arg === '--event') events.push(value());
    else if (arg.startsWith('--event=')) events.push(arg.slice('--event='.length));
    else if (arg === '-p' || arg === '--pid') pid = positiveInteger(arg, value());
    else if (arg === '-a' || arg === '--all-cpus') allCpus = true;
    else if (arg === '--pages' || arg === '-m') {
      const given = positiveInteger(arg, value());
      pages = given;
      if (!isPowerOfTwo(given)) throw new UsageError(`${arg} ${pages}: the number of data pages must be a power of two`);
    } else if (arg === '-c' || arg === '--count') {
      const text = value();
      if (!/^\d+$/.test(text) || BigInt(text) === 0n) throw new UsageError(`${arg} ${text}: expected a positive integer period`);
      period = BigInt(text);
    } else if (arg === '-F' || arg === '--freq') freq = positiveInteger(arg, value());
    else if (arg === '-g' || arg === '--call-graph') {
      // The mode is optional (`-g` alone is frame pointers); nothing else before -- is a bare word.
      const next = args[i + 1];
      callGraph = next !== undefined && !next.startsWith('-') ? parseCallGraph(arg, args[++i]) : { mode: 'fp' };
    } else if (arg.startsWith('--call-graph=')) callGraph = parseCallGraph('--call-graph', arg.slice('--call-graph='.length));
    else if (arg === '--duration') {
      const text = value();
      const seconds = Number(text);
      if (!Number.isFinite(seconds) || seconds <= 0) throw new UsageError(`--duration ${text}: expected a positive number of seconds`);
      durationSec = seconds;
    } else if (arg === '-o' || arg === '--output') output = value();
    else if (arg === '--no-gap-free') gapFree = false;
    else if (arg === '--no-sideband') sideband = false;
    else if (arg === '--no-warm-copy') warmCopy = false;
    else if (arg === '-q' || arg === '--quiet') quiet = true;
    else if (arg === '--leave-running') leaveRunning = true;
    else if (arg === '--snapshot-on') snapshotOn.push(value());
    else if (arg === '--snapshot-on-exit-signal') snapshotOnExitSignal = true;
    else if (arg === '--snapshot-dir') snapshotDir = value();
    else if (arg === '--post') postSec = seconds(arg, value(), true);
    else if (arg === '--min-interval') minIntervalSec = seconds(arg, value(), true);
    else if (arg === '--window') windowSec = seconds(arg, value(), false);
    else if (arg === '--follow') follow = { intervalMs: DEFAULT_FOLLOW_MS };
    else if (arg.startsWith('--follow=')) follow = { intervalMs: positiveInteger('--follow', arg.slice('--follow='.length)) };
    else throw new UsageError(`${command}: unknown option ${arg}`);
  }
  if (period !== undefined && freq !== undefined) throw new UsageError('-c and -F are mutually exclusive');
  const targets = [pid !== undefined, allCpus, launch !== undefined].filter(Boolean).length;
  if (targets !== 1) throw new UsageError(`${command} needs exactly one target: -p PID, -a, or -- COMMAND`);
  const target: CaptureTarget = launch ? { kind: 'launch', argv: launch } : pid !== undefined ? { kind: 'pid', pid } : { kind: 'cpus' };
  if (command === 'keep' && output !== undefined) throw new UsageError('keep holds rings for later attachment; it writes no output (-o)');
  if (snapshotOn.length > 0 && snapshotDir === undefined)
    throw new UsageError('--snapshot-on needs --snapshot-dir DIR: each trigger writes a numbered perf.data there');
  if (snapshotOnExitSignal && snapshotDir === undefined)
    throw new UsageError('--snapshot-on-exit-signal needs --snapshot-dir DIR: the snapshot is a numbered perf.data there');
  if (snapshotOnExitSignal && !launch) throw new UsageError('--snapshot-on-exit-signal watches a launched command: give it with -- COMMAND');
  if (snapshotDir !== undefined && snapshotOn.length === 0 && !snapshotOnExitSignal)
    throw new UsageError('--snapshot-dir is where triggers write; give at least one --snapshot-on SPEC or --snapshot-on-exit-signal');
  if (follow && command === 'keep') throw new UsageError('keep holds rings for later attachment; --follow is for capture');
  if (follow && formatOf(output) !== 'jsonl') throw new UsageError(`--follow streams JSON Lines; -o ${output} is written whole when the capture ends`);
  if (follow && output !== undefined && output !== '-' && !isCharacterDevice(output)) {
    // A file is renamed into place whole at the end (never half-written): that is not following.
    throw new UsageError(`--follow streams JSON Lines to standard output as they come; drop -o ${output} and redirect stdout (> ${output}) to keep them`);
  }
  return {
    ...(follow ? { follow } : {}),
    command,
    events,
    target,
    pages,
    period,
    freq,
    callGraph,
    durationSec,
    output,
    format: formatOf(output),
    gapFree,
    sideband,
    warmCopy,
    quiet,
    leaveRunning,
    snapshotOn,
    snapshotOnExitSignal,
    snapshotDir,
    postSec,
    minIntervalSec,
    windowSec,
  };
}
