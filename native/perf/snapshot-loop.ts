// The one snapshot loop: every ring of a recording, our own or borrowed, copied in turn. A backward
// ring is paused, copied and resumed (or, when the user holds it paused, copied as it is), a
// gap-free pair swaps, our side-band rings are read, a borrowed forward ring is only peeked at, and
// copies a recording already holds (retired rings) are handed out as they are.

import type { RingCopy } from '../abi/snapshot';
import type { BackwardRing } from './backward-ring';
import type { ForwardRing } from './forward-ring';
import type { GapFreeRingPair } from './gap-free-pair';
import type { RingSnapshot } from './ring-mapping';

/** One ring (or held copy) as a snapshot reads it. */
export type SnapshotRing =
  | { readonly kind: 'backward'; readonly ring: BackwardRing }
  | { readonly kind: 'pair'; readonly pair: GapFreeRingPair }
  | { readonly kind: 'forward'; readonly ring: ForwardRing }
  | { readonly kind: 'peek'; readonly ring: { peek(): RingCopy } }
  | { readonly kind: 'held'; readonly copy: RingCopy };

export interface RingCopies {
  readonly rings: RingCopy[];
  /** Per copy, how long its ring was paused (0 for rings not paused). */
  readonly pauseWindowNs: number[];
}

/** A copy of a backward ring nothing writes now (paused by the user, or disabled before it is retired). */
export function quiescentCopy(ring: BackwardRing): RingCopy {
  const result = ring.copyQuiescent();
  return ring.toCopy(result.bytes, result.validBytes, result.written, 'paused');
}

/**
 * Copies every ring in order. `heldPaused`: the backward rings are already paused, so they are copied without a pause of their own.
 * `leaveWhole`: take nothing away from the next snapshot: gap-free pairs are paused and copied instead of swapped, our
 * side-band rings are read without being consumed.
 */
export function snapshotRings(rings: readonly SnapshotRing[], heldPaused = false, leaveWhole = false): RingCopies {
  const copies: RingCopy[] = [];
  const pauseWindowNs: number[] = [];
  const add = (copy: RingCopy, windowNs: number) => {
    copies.push(copy);
    pauseWindowNs.push(windowNs);
  };
  for (const unit of rings) {
    let result: RingSnapshot;
    switch (unit.kind) {
      case 'backward':
        if (heldPaused) {
          add(quiescentCopy(unit.ring), 0);
          continue;
        }
        result = unit.ring.snapshot();
        break;
      case 'pair':
        result = leaveWhole ? unit.pair.peek() : unit.pair.snapshot();
        break;
      case 'forward':
        if (leaveWhole) {
          add(unit.ring.peek(), 0);
          continue;
        }
        result = unit.ring.read();
        break;
      case 'peek':
        add(unit.ring.peek(), 0);
        continue;
      case 'held':
        add(unit.copy, 0);
        continue;
    }
    add(result.copy, result.pauseWindowNs);
  }
  return { rings: copies, pauseWindowNs };
}

/** Stops (or restarts) writes into every backward ring and pair; records arriving meanwhile are counted as lost. */
export function pauseRings(rings: readonly SnapshotRing[], paused: boolean): void {
  for (const unit of rings) {
    if (unit.kind === 'backward') unit.ring.event.pauseOutput(paused);
    else if (unit.kind === 'pair') unit.pair.pauseOutput(paused);
  }
}
