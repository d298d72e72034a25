// `ringside keep`: events that outlive the editor. Opens the flight recorder like `capture`, then
// just holds the rings and publishes what it holds (fd numbers, attrs, ring sizes) in a state file
// only its owner can read; the extension re-attaches with pidfd_getfd and maps the SAME rings.
// Ends cleanly on SIGTERM/SIGINT (state file removed, fds closed) or when a launched command exits
// AND nobody needs the rings any more is the user's call: the keeper stays until told to stop.

import type { CaptureOptions } from './args';
import { prepareEvents, recorderTarget } from './capture';
import { Recorder } from '../perf/recorder';
import { pageSize } from '../sys/libc';
import { buildKeeperState, writeKeeperState, removeKeeperState, type KeeperRingState, type KeeperTarget } from '../keeper/state';

export async function runKeep(options: CaptureOptions): Promise<number> {
  const prepared = prepareEvents(options);
  // One ring per thread/CPU: an attached client maps exactly the rings listed, so no gap-free pairs.
  const recorder = await Recorder.open({ events: prepared.events, target: recorderTarget(options, prepared), pages: options.pages, gapFree: false, sideband: options.sideband });
  try {
    const page = pageSize();
    const rings: KeeperRingState[] = [
      ...recorder.backwardRings.map((ring) => ({ ring, direction: 'backward' as const })),
      ...recorder.forwardRings.map((ring) => ({ ring, direction: 'forward' as const })),
    ].map(({ ring, direction }) => ({
      fd: ring.event.fd,
      ringId: ring.meta.ringId,
      label: ring.meta.label,
      cpu: ring.meta.cpu,
      tid: ring.meta.tid,
      direction,
      pages: ring.dataSize / page,
      defaultEvent: ring.meta.defaultEvent,
    }));
    const target: KeeperTarget = options.target.kind === 'launch'
      ? { kind: 'launch', argv: options.target.argv, ...(recorder.childPid ? { childPid: recorder.childPid } : {}) }
      : options.target.kind === 'pid' ? { kind: 'pid', pid: options.target.pid } : { kind: 'cpus' };
    const events = recorder.eventDescriptions().map((event) => ({ name: event.name, attr: event.attr, ids: event.ids, ...(event.tracepoint ? { tracepoint: event.tracepoint } : {}) }));
    const file = writeKeeperState(buildKeeperState({ target, events, rings }));
    process.stderr.write(`ringside: keeping ${rings.length} ring(s) of ${events.length} event(s); state in ${file}; stop with kill ${process.pid}\n`);
    await new Promise<void>((resolve) => {
      process.once('SIGTERM', resolve);
      process.once('SIGINT', resolve);
      if (options.durationSec !== undefined) setTimeout(resolve, options.durationSec * 1000);
    });
  } finally {
    removeKeeperState(process.pid);
    recorder.dispose();
  }
  return 0;
}
