// Persistent PMU events (the 2013 PERF_TYPE_PERSISTENT proposal): where the kernel exposes a PMU whose format uses the `attrN:bit`
// syntax (e.g. /sys/bus/event_source/devices/persistent), its events already run with a buffer the
// kernel keeps. Attaching opens the event through the normal spec path (`pmu/event/` → attr via
// sysfs) on every online CPU and maps each ring READ-ONLY: we look at the kernel's buffer, we never
// consume or resize it. Machines without such a PMU get a clear "none here" explanation.

import { listEvents } from '../../native/specs/list';
import { DEFAULT_SYSFS_ROOT, pmuDevicesDir } from '../../native/specs/pmu';
import { resolveEventSpec, type ResolvedSpec } from '../../native/specs/resolve';
import { openEvent, type PerfEventFd } from '../../native/perf/events';
import { BackwardRing } from '../../native/perf/backward-ring';
import type { RingMeta } from '../../native/perf/ring-mapping';
import { onlineCpus } from '../../native/perf/procfs';
import type { EventDescription } from '../../native/abi/snapshot';
import { AttachedRingSource, AttachError, type CopyBufferOptions } from '../../native/perf/borrowed';

export interface PersistentEventEntry {
  readonly pmu: string;
  readonly event: string;
  /** The spec that opens it: `pmu/event/`. */
  readonly spec: string;
  /** The alias text from sysfs (`event=0x3,persistent=1`). */
  readonly terms: string;
  readonly type: number;
}

export interface PersistentEventListing {
  readonly events: readonly PersistentEventEntry[];
  /** Persistent PMUs found (some may list no events). */
  readonly pmus: readonly string[];
  /** Set when there is nothing to attach to: says why, for the UI to show as is. */
  readonly none?: string;
}

/** Every event of every persistent PMU under `sysfsRoot`. */
export function listPersistentEvents(sysfsRoot: string = DEFAULT_SYSFS_ROOT): PersistentEventListing {
  const pmus = listEvents({ sysfsRoot }).pmus.filter((pmu) => pmu.persistent);
  const events = pmus.flatMap((pmu) =>
    pmu.events.map((event) => ({ pmu: pmu.name, event: event.name, spec: `${pmu.name}/${event.name}/`, terms: event.terms, type: pmu.type })),
  );
  if (events.length > 0) return { events, pmus: pmus.map((pmu) => pmu.name) };
  const none =
    pmus.length === 0
      ? `this kernel exposes no persistent PMU (no PMU under ${pmuDevicesDir(sysfsRoot)} has an attrN: format term); use a kept recording ("ringside keep" / keeper.enabled) for events that outlive the editor`
      : `persistent PMU ${pmus.map((pmu) => pmu.name).join(', ')} lists no events; type a spec such as ${pmus[0].name}/TERM=VALUE/ with its format terms`;
  return { events: [], pmus: pmus.map((pmu) => pmu.name), none };
}

export interface PersistentAttachOptions extends CopyBufferOptions {
  readonly sysfsRoot?: string;
  /** Data pages of the kernel's buffer (a persistent event's buffer size is the kernel's choice). */
  readonly pages: number;
  readonly cpus?: readonly number[];
}

/** The spec → attr step alone (sysfs formats, including `attrN:bit`, applied). */
export function resolvePersistentEvent(spec: string, sysfsRoot: string = DEFAULT_SYSFS_ROOT): ResolvedSpec {
  return resolveEventSpec(spec, { sysfsRoot });
}

/**
 * Opens a persistent event on every CPU (pid -1: the kernel's buffer is per CPU) and maps each
 * ring read-only, as a RingSource snapshots use like any other. Fails clearly, leaking nothing.
 */
export function attachPersistentEvent(spec: string, options: PersistentAttachOptions): AttachedRingSource {
  const resolved = resolvePersistentEvent(spec, options.sysfsRoot);
  const attr = { ...resolved.attr, flags: { ...resolved.attr.flags, writeBackward: true } };
  const cpus = options.cpus ?? onlineCpus();
  const opened: PerfEventFd[] = [];
  const rings: BackwardRing[] = [];
  try {
    for (const cpu of cpus) {
      const event = openEvent(attr, -1, cpu, -1, undefined, { name: `${resolved.name} cpu${cpu}` });
      opened.push(event);
      const meta: RingMeta = { ringId: rings.length, label: `${resolved.name} cpu${cpu}`, cpu, tid: -1, defaultEvent: 0 };
      // BackwardRing maps PROT_READ only: the kernel's buffer is looked at, never written.
      rings.push(new BackwardRing(event, options.pages, meta));
    }
  } catch (error) {
    for (const ring of rings) ring.dispose();
    for (const event of opened.slice(rings.length)) event.dispose();
    if (error instanceof Error && !(error instanceof AttachError)) {
      throw new AttachError(
        `could not attach to persistent event ${spec}: ${error.message}`,
        'check the PMU still exists and that perf_event_paranoid allows per-CPU events (or run with CAP_PERFMON)',
      );
    }
    throw error;
  }
  const events: EventDescription[] = [
    {
      index: 0,
      name: resolved.name,
      attr,
      ids: rings.map((ring) => ring.event.id()),
      ...(resolved.tracepoint ? { tracepoint: resolved.tracepoint } : {}),
    },
  ];
  return new AttachedRingSource(
    events,
    rings.map((ring) => ({ kind: 'backward' as const, ring })),
    { pid: process.pid, alive: () => true },
    options.warmCopyBuffers,
  );
}
