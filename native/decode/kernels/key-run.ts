// keyRing's fast loop (scatter.ts) as WebAssembly, for rings whose copy and key arrays live in one
// WebAssembly memory (wasm/snapshot-memory.ts): a run of timed samples of one event, each keyed by
// its time relative to the ring's base, its byte offset and its event position, written from the
// top of the key arrays down (the ring is walked newest first, the keys are read oldest first). The
// same records as the sample run takes (sampleTests), the same time (the exact 64-bit difference
// rounded once), the same bookkeeping of the smallest and largest time and of whether the times are
// sorted as keyRing's JavaScript loop keeps.

import {
  KEY_BASE_LO,
  KEY_CAPACITY,
  KEY_END,
  KEY_ID_HI,
  KEY_ID_LO,
  KEY_MAX,
  KEY_MAX_AT,
  KEY_MAX_REL,
  KEY_MIN_AT,
  KEY_MIN_REL,
  KEY_O,
  KEY_OFFSETS,
  KEY_POSITION,
  KEY_POSITIONS,
  KEY_ROWS,
  KEY_SORTED,
  KEY_SRC,
  KEY_S_ID,
  KEY_S_MIN,
  KEY_S_TIME,
  KEY_TIMES,
  RECORD_SAMPLE,
} from '../wasm/job-layout';
import { RECORDER_S_ID, RECORDER_S_MIN, RECORDER_S_TIME, differenceFits } from './sample';

/** Keys at most max samples as the job says (wasm/job-layout.ts) and returns how many; writes back where it stopped. */
export function keyRun(job: usize): i32 {
  if (load<i32>(job, KEY_S_TIME) == RECORDER_S_TIME && load<i32>(job, KEY_S_MIN) == RECORDER_S_MIN && load<i32>(job, KEY_S_ID) == RECORDER_S_ID)
    return run(job, true);
  return run(job, false);
}

@inline
function run(job: usize, recorderLayout: bool): i32 {
  const src = load<u32>(job, KEY_SRC);
  const end = src + load<u32>(job, KEY_END);
  const max = load<i32>(job, KEY_MAX);
  const idLo = load<u32>(job, KEY_ID_LO);
  const idHi = load<u32>(job, KEY_ID_HI);
  const id = (<u64>idHi << 32) | idLo;
  const position = load<u32>(job, KEY_POSITION);
  const base = load<u64>(job, KEY_BASE_LO);
  const times = load<u32>(job, KEY_TIMES);
  const offsets = load<u32>(job, KEY_OFFSETS);
  const positions = load<u32>(job, KEY_POSITIONS);
  const capacity = load<u32>(job, KEY_CAPACITY);
  const sTime: u32 = recorderLayout ? RECORDER_S_TIME : load<u32>(job, KEY_S_TIME);
  const sMin: u32 = recorderLayout ? RECORDER_S_MIN : load<u32>(job, KEY_S_MIN);
  const sId: i32 = recorderLayout ? RECORDER_S_ID : load<i32>(job, KEY_S_ID);
  let o = load<u32>(job, KEY_O);
  let rows = load<u32>(job, KEY_ROWS);
  let sorted = load<i32>(job, KEY_SORTED);
  let minRel = load<f64>(job, KEY_MIN_REL);
  let maxRel = load<f64>(job, KEY_MAX_REL);
  let minO: i32 = -1;
  let maxO: i32 = -1;
  let n = 0;
  while (n < max) {
    // The records the sample run takes (sample.ts).
    const p = src + o;
    if (p + 8 > end) break;
    const sizeMisc = load<u32>(p, 4);
    const size = sizeMisc >>> 16;
    if (load<u32>(p) != RECORD_SAMPLE) break;
    if (size < sMin) break;
    if (size & 7) break;
    if (p + size > end) break;
    if (sId >= 0) {
      if (<u32>sId + 8 > size) break;
      if (load<u64>(p + sId) != id) break;
    }
    const t = load<u64>(p + sTime);
    if (!differenceFits(t, base)) break;
    const rel = <f64>(<i64>(t - base));
    // Walked newest first: usually each record is older than all before it; only when it is not can
    // it be the largest, and then the times are not sorted oldest first.
    if (rel < minRel) {
      minRel = rel;
      minO = o;
    } else if (rel != minRel) {
      sorted = 0;
      if (rel > maxRel) {
        maxRel = rel;
        maxO = o;
      }
    }
    rows++;
    const at = capacity - rows;
    store<f64>(times + (at << 3), rel);
    store<u32>(offsets + (at << 2), o);
    store<u16>(positions + (at << 1), position);
    o += size;
    n++;
  }
  if (minO >= 0) store<u32>(job, (<u32>minO + sTime) >>> 2, KEY_MIN_AT);
  if (maxO >= 0) store<u32>(job, (<u32>maxO + sTime) >>> 2, KEY_MAX_AT);
  store<u32>(job, o, KEY_O);
  store<u32>(job, rows, KEY_ROWS);
  store<i32>(job, sorted, KEY_SORTED);
  store<f64>(job, minRel, KEY_MIN_REL);
  store<f64>(job, maxRel, KEY_MAX_REL);
  return n;
}
