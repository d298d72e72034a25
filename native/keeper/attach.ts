// Attaching to a keeper: every ring its state file publishes, borrowed from the keeper process.

import { AttachError, AttachedRingSource, PeekRing, borrowPerfFd, type AttachedRing, type CopyBufferOptions } from '../perf/borrowed';
import { mapExistingRing, type BackwardRing, type RingMeta } from '../perf/ring';
import { readSidebandSpool, sidebandSpoolPath } from './sideband';
import { isKeeperAlive, keeperEventDescriptions, keeperStateDir, releasePauseLease, removeKeeperState, takePauseLease, type KeeperState } from './state';

/** Borrows every ring a keeper publishes (the keeper resumes them if this process dies with them paused). */
export function attachKeeperRings(state: KeeperState, options: CopyBufferOptions = {}): AttachedRingSource {
  if (!isKeeperAlive(state)) throw new AttachError(`keeper ${state.pid} is not running any more`, 'start a new kept recording; its rings died with it');
  const events = keeperEventDescriptions(state);
  const rings: AttachedRing[] = [];
  try {
    for (const ring of state.rings) {
      const fd = borrowPerfFd(state.pid, ring.fd);
      const meta: RingMeta = { ringId: ring.ringId, label: ring.label, cpu: ring.cpu, tid: ring.tid, defaultEvent: ring.defaultEvent };
      if (ring.direction === 'backward') {
        const attr = events[ring.defaultEvent]?.attr;
        rings.push({ kind: 'backward', ring: mapExistingRing(fd, ring.pages, 'backward', { meta, ...(attr ? { attr } : {}) }) as BackwardRing });
      } else {
        // The keeper drains its side-band rings into spools beside its state: a copy is the spool, then
        // the ring. A state without stateDir comes from a keeper that did not spool yet.
        const spool = state.stateDir !== undefined ? sidebandSpoolPath(state.pid, ring.ringId, state.stateDir) : undefined;
        rings.push({ kind: 'peek', ring: new PeekRing(fd, ring.pages, meta, events[ring.defaultEvent]?.attr, spool ? () => readSidebandSpool(spool) : undefined) });
      }
    }
  } catch (error) {
    for (const attached of rings) attached.ring.dispose();
    throw error;
  }
  // Where the keeper looks for leases; a state file from before keepers published it: the default.
  const dir = state.stateDir ?? keeperStateDir();
  return new AttachedRingSource(events, rings, {
    pid: state.pid,
    alive: () => isKeeperAlive(state),
    // A lease the keeper can see: it resumes the rings if this process dies with them paused.
    pausing: () => takePauseLease(state.pid, process.pid, dir),
    resumed: () => releasePauseLease(state.pid, process.pid, dir),
    // A keeper killed by SIGKILL leaves its state file; nobody can attach to it any more.
    gone: () => removeKeeperState(state.pid, dir),
  }, options.warmCopyBuffers);
}

