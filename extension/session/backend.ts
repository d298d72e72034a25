// Binds the session ports to the real kernel side: event specs resolved against the target's
// symbols (so `mem:file.c:42:x` and `mem:counter:w` work from the editor too), recordings through
// native/perf Recorder. The rest (decode, perf.data, attaching) comes from coreBackend.

import { availableParallelism } from 'node:os';
import { Recorder } from '../../native/perf/recorder';
import { allocateDecodableCopy } from '../../native/decode/wasm/copy-room';
import { describeExit } from '../../native/perf/launch';
import { expandEventSpecs, resolveEventSpec, type ResolvedSpec } from '../../native/specs/resolve';
import { chooseLineProbes } from '../../native/specs/line-probe';
import { breakpointDelivery } from '../../native/perf/breakpoint-delivery';
import { readPerfAccess } from '../../native/sys/access';
import { lazyTargetSymbols } from '../../native/symbols/target';
import { createCoreBackend } from './core-backend';
import type { Backend, RecordOptions, RingSource, RingStatus } from './ports';
import { TriggerWatcher } from '../../native/perf/trigger-watcher';

export interface RecordingSettings {
  /** -c: sample every N events (sampling events without their own period). */
  period?: bigint;
  /** -F: samples per second. */
  freq?: number;
  callchain?: boolean;
  /** Keep a pre-faulted copy buffer per flight-recorder ring (RecorderOptions.warmCopyBuffers). */
  warmCopyBuffers?: boolean;
  /** Seconds of history wanted: rings grow until they keep it (RecorderOptions.windowSec). */
  windowSec?: number;
}

export function createBackend(settings: () => RecordingSettings = () => ({})): Backend {
  return {
    ...createCoreBackend(() => ({ warmCopyBuffers: settings().warmCopyBuffers ?? true })),
    async resolveEvents(specs, context, lines): Promise<ResolvedSpec[]> {
      const symbols = lazyTargetSymbols(context)?.symbols;
      const { period, freq, callchain } = settings();
      const resolveContext = { symbols, period, freq, callchain };
      // Globs (syscalls:sys_enter_*) become the tracepoints they match, as in the CLI and perf; any
      // other spec stays one event at its place (callers pair specs with events by index).
      const resolved = specs.flatMap((spec) => expandEventSpecs([spec])).map((spec) => resolveEventSpec(spec, resolveContext));
      // Source lines are counted by the one rule the CLI follows (uprobes where breakpoints cannot see them).
      return chooseLineProbes(resolved, resolveContext, {
        delivery: breakpointDelivery,
        access: readPerfAccess,
        ...(lines ? { mode: lines.mode, ...(lines.freeRegisters ? { freeRegisters: lines.freeRegisters } : {}) } : {}),
      });
    },
    async record(options: RecordOptions): Promise<RingSource> {
      const target =
        options.target.kind === 'launch'
          ? {
              kind: 'launch' as const,
              argv: [...options.target.argv],
              ...(options.target.cwd ? { cwd: options.target.cwd } : {}),
              ...(options.target.env ? { env: { ...options.target.env } } : {}),
              stdio: 'ignore' as const,
            }
          : options.target.kind === 'pid'
            ? { kind: 'pid' as const, pid: options.target.pid }
            : { kind: 'cpus' as const, ...(options.target.cpus ? { cpus: [...options.target.cpus] } : {}) };
      const recorder = await Recorder.open({
        events: options.events,
        target,
        ...(options.pages !== undefined ? { pages: options.pages } : {}),
        ...(options.gapFree !== undefined ? { gapFree: options.gapFree } : {}),
        ...(options.sideband !== undefined ? { sideband: options.sideband } : {}),
        // A trigger's ring holds only its own records, so a moving data_head means it fired.
        ...(options.triggers ? { ownRing: options.triggers.eventIndices } : {}),
        warmCopyBuffers: settings().warmCopyBuffers ?? true,
        // Copies in shared memory: the decode pool's workers read them in place (no staging copy).
        sharedCopyBuffers: availableParallelism() > 1,
        // A ring decoded on its own is decoded where it was copied, by the WebAssembly loop.
        allocateCopy: allocateDecodableCopy,
        ...(settings().windowSec !== undefined ? { windowSec: settings().windowSec } : {}),
      });
      return recorderSource(recorder);
    },
  };
}

/** A Recorder seen as a RingSource (plus per-event enable/disable/modify for the watch controls). */
export function recorderSource(recorder: Recorder): RingSource {
  const events = recorder.eventDescriptions();
  let paused = false;
  return {
    events,
    snapshot: () => recorder.snapshot(),
    pause: () => {
      recorder.pause();
      paused = true;
    },
    resume: () => {
      recorder.resume();
      paused = false;
    },
    ringStats: (): RingStatus[] => {
      const metas = new Map([...recorder.backwardRings, ...recorder.forwardRings].map((ring) => [ring.meta.ringId, ring.meta]));
      return recorder.ringStats().map((stats) => ({
        ringId: stats.ringId,
        label: stats.label,
        cpu: metas.get(stats.ringId)?.cpu ?? -1,
        tid: metas.get(stats.ringId)?.tid ?? -1,
        direction: stats.direction,
        dataSize: stats.dataSize,
        bytesWritten: stats.bytesWritten,
        paused: paused && stats.direction === 'backward',
      }));
    },
    // Live follow reads what the rings gain without pausing them (issue 37); only from the rings this process opened.
    followLive: () => recorder.follow({ fromStart: false }),
    processesNow: () => recorder.processesNow(),
    ...(recorder.childPid !== undefined ? { childPid: recorder.childPid } : {}),
    ...(recorder.limitations.length ? { limitations: recorder.limitations } : {}),
    // Settles with how the program ended (its exit code or the signal that killed it).
    ...(recorder.exitStatus ? { exited: recorder.exitStatus.then((exit) => describeExit(exit)) } : {}),
    watchTriggers(options, fire) {
      const watcher = new TriggerWatcher(() => recorder.backwardRings, options, fire);
      watcher.start();
      return watcher;
    },
    setEventEnabled(eventIndex, enabled) {
      for (const fd of recorder.primaryFds(eventIndex)) {
        if (enabled) fd.enable();
        else fd.disable();
      }
    },
    modifyEvent(eventIndex, attr) {
      for (const fd of recorder.primaryFds(eventIndex)) fd.modifyAttributes({ ...attr, flags: { ...fd.attr.flags, ...attr.flags, writeBackward: true } });
    },
    // Stopping a recording ends the program it launched (SIGTERM, then SIGKILL), as the CLI does:
    // nothing Ringside started outlives the session.
    dispose: () => {
      void recorder.endLaunched();
      recorder.dispose();
    },
  };
}
