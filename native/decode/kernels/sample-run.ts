// decodeSampleRun (decode-ring.ts) as WebAssembly, for rings whose copy and columns live in one
// WebAssembly memory (wasm/copy-room.ts): consecutive samples of one event whose layout has every
// field a row reads, from byte o of the ring, into rows row, row + step, ... Same row, same tests per
// record, same time: the exact 64-bit difference from the base rounded once to a double, which is
// what the JavaScript loop's (hi - baseHi) * 2^32 + (lo - baseLo) gives; a difference past 64 bits
// (damaged) ends the run before anything of the record is written, and the JavaScript loop takes it.
//
// Why WebAssembly: in optimised JavaScript each typed-array access carries a map check, a bounds
// check and reloads of the array's length and data pointer; here an access is one instruction, its
// bounds kept by guard pages. On the bench's rings this loop ran 2-3x as fast as decodeSampleRun.
//
// The loop's values (ten column addresses, five field offsets, the walk's own) do not all fit
// x86-64's registers. The layout every Ringside recorder writes (IDENTIFIER first, then IP, TID,
// TIME, CPU) gets a copy of the loop with its field offsets as constants, which leaves the rest in
// registers; any other layout runs the general copy (about 10% slower on a ring that fits the cache).

import {
  RECORD_SAMPLE,
  SAMPLE_BASE_LO,
  SAMPLE_COLUMNS,
  SAMPLE_END,
  SAMPLE_EVENT,
  SAMPLE_ID_LO,
  SAMPLE_MAX,
  SAMPLE_MAX_AT,
  SAMPLE_MAX_REL,
  SAMPLE_MIN_AT,
  SAMPLE_MIN_REL,
  SAMPLE_O,
  SAMPLE_ROW,
  SAMPLE_SRC,
  SAMPLE_STEP,
  SAMPLE_S_CPU,
  SAMPLE_S_ID,
  SAMPLE_S_IP,
  SAMPLE_S_MIN,
  SAMPLE_S_PID_TID,
  SAMPLE_S_TIME,
} from '../wasm/job-layout';
import { RECORDER_S_CPU, RECORDER_S_ID, RECORDER_S_IP, RECORDER_S_MIN, RECORDER_S_PID_TID, RECORDER_S_TIME, differenceFits } from './sample';

/** Decodes at most max samples as the job says (wasm/job-layout.ts) and returns how many; writes back where it stopped. */
export function sampleRun(job: usize): i32 {
  if (
    load<i32>(job, SAMPLE_STEP) == -1 &&
    load<i32>(job, SAMPLE_S_TIME) == RECORDER_S_TIME &&
    load<i32>(job, SAMPLE_S_PID_TID) == RECORDER_S_PID_TID &&
    load<i32>(job, SAMPLE_S_CPU) == RECORDER_S_CPU &&
    load<i32>(job, SAMPLE_S_IP) == RECORDER_S_IP &&
    load<i32>(job, SAMPLE_S_MIN) == RECORDER_S_MIN &&
    load<i32>(job, SAMPLE_S_ID) == RECORDER_S_ID
  ) {
    // A backward ring is newest first, so its times fall record after record: the loop that takes
    // only such records keeps no smallest and largest time per record (see run). A record whose time
    // does not fall goes through the loop that does, alone, and then the falling loop goes on.
    // (The falling loop's test of a time's difference needs a base below 2^63.)
    if (<i64>load<u64>(job, SAMPLE_BASE_LO) < 0) return run(job, true, false);
    let decoded = 0;
    for (;;) {
      const falling = run(job, true, true);
      decoded += falling;
      const left = load<i32>(job, SAMPLE_MAX) - falling;
      if (left <= 0) return decoded;
      store<i32>(job, 1, SAMPLE_MAX);
      const one = run(job, true, false);
      store<i32>(job, left - one, SAMPLE_MAX);
      if (one == 0) return decoded;
      decoded += one;
    }
  }
  return run(job, false, false);
}

/**
 * The run; `backwardRecorder`: a backward ring's run (rows written from the top down) of the
 * recorder's layout, whose field offsets and step are then constants of this copy of the loop.
 * `falling` (with backwardRecorder): only records whose time is below the one before in the run; the
 * run's largest time is then its first record's and its smallest its last one's, each the only
 * record with that time, so the loop keeps neither per record: the two registers that held where the
 * bounds were go to column addresses TurboFan otherwise reloaded from the stack on every record
 * (the bench's callchain+RAW rings: 3-4% less time a decode at 1 MiB, 7-10% at 16 MiB).
 */
@inline
function run(job: usize, backwardRecorder: bool, falling: bool): i32 {
  const src = load<u32>(job, SAMPLE_SRC);
  const end = src + load<u32>(job, SAMPLE_END);
  const step: i32 = backwardRecorder ? -1 : load<i32>(job, SAMPLE_STEP);
  // The id as one u64 (lo, then hi: little endian): TurboFan rebuilt it from its two halves on every record.
  const id = load<u64>(job, SAMPLE_ID_LO);
  const event = load<u32>(job, SAMPLE_EVENT);
  const base = load<u64>(job, SAMPLE_BASE_LO);
  const sTime: u32 = backwardRecorder ? RECORDER_S_TIME : load<u32>(job, SAMPLE_S_TIME);
  const sPidTid: u32 = backwardRecorder ? RECORDER_S_PID_TID : load<u32>(job, SAMPLE_S_PID_TID);
  const sCpu: u32 = backwardRecorder ? RECORDER_S_CPU : load<u32>(job, SAMPLE_S_CPU);
  const sIp: u32 = backwardRecorder ? RECORDER_S_IP : load<u32>(job, SAMPLE_S_IP);
  const sMin: u32 = backwardRecorder ? RECORDER_S_MIN : load<u32>(job, SAMPLE_S_MIN);
  const sId: i32 = backwardRecorder ? RECORDER_S_ID : load<i32>(job, SAMPLE_S_ID);
  // row-writer as-column-addresses omit=ring job=job base=SAMPLE_COLUMNS
  // (generated from column-schema.ts by scripts/build-row-writers.mjs: edit the schema, then npm run build)
  const cTime = load<u32>(job, SAMPLE_COLUMNS + 0);
  const cKind = load<u32>(job, SAMPLE_COLUMNS + 4);
  const cMisc = load<u32>(job, SAMPLE_COLUMNS + 8);
  const cEvent = load<u32>(job, SAMPLE_COLUMNS + 12);
  const cPid = load<u32>(job, SAMPLE_COLUMNS + 16);
  const cTid = load<u32>(job, SAMPLE_COLUMNS + 20);
  const cCpu = load<u32>(job, SAMPLE_COLUMNS + 24);
  const cIpHi = load<u32>(job, SAMPLE_COLUMNS + 28);
  const cIpLo = load<u32>(job, SAMPLE_COLUMNS + 32);
  const cOffset = load<u32>(job, SAMPLE_COLUMNS + 40);
  // end row-writer
  // The walk as an address (p) and the rows as a countdown to stopRow: fewer values live in the loop.
  let p = src + load<u32>(job, SAMPLE_O);
  // Where the run starts (the falling loop writes the job's o on the way: see its end).
  const firstP = p;
  const firstRow = load<i32>(job, SAMPLE_ROW);
  let row = firstRow;
  const stopRow = firstRow + load<i32>(job, SAMPLE_MAX) * step;
  let minRel = load<f64>(job, SAMPLE_MIN_REL);
  let maxRel = load<f64>(job, SAMPLE_MAX_REL);
  // The record whose time became the smallest (largest) in this call; 0: none did.
  let minP: u32 = 0;
  let maxP: u32 = 0;
  // falling: the time of the record before in this call.
  let previous = Infinity;
  // falling: the size of the record before (see the end of the loop).
  let expected: u32 = 0;
  // (A backward run's rows count down: row > stopRow is the test the fastest copy of the loop had.)
  while (backwardRecorder ? row > stopRow : row != stopRow) {
    // The records decodeSampleRun takes (sample.ts: the same tests as the key run's).
    if (p + 8 > end) break;
    const sizeMisc = load<u32>(p, 4);
    const size = sizeMisc >>> 16;
    if (load<u32>(p) != RECORD_SAMPLE) break;
    if (size < sMin) break;
    if (size & 7) break;
    if (p + size > end) break;
    if (sId >= 0) {
      // (The recorder's layout has its id inside the sMin bytes just tested.)
      if (!backwardRecorder && <u32>sId + 8 > size) break;
      if (load<u64>(p + sId) != id) break;
    }
    const t = load<u64>(p + sTime);
    // falling: the base is below 2^63 (sampleRun sees to it), so a time below 2^63 too is a difference
    // that fits: one test instead of differenceFits's three. A time past 2^63 (damaged) goes to the
    // loop that tracks each time, whose test decides as before.
    if (falling ? <i64>t < 0 : !differenceFits(t, base)) break;
    const rel = <f64>(<i64>(t - base));
    if (falling && !(rel < previous)) break;
    const r = <u32>row;
    const o = p - src;
    // row-writer as-store type=RECORD_SAMPLE omit=ring row=r p=p o=o time=rel misc=sizeMisc event=event pidTid=sPidTid cpu=sCpu ip=sIp
    // (generated from column-schema.ts by scripts/build-row-writers.mjs: edit the schema, then npm run build)
    store<f64>(cTime + (r << 3), rel);
    store<u8>(cKind + r, RECORD_SAMPLE);
    store<u16>(cMisc + (r << 1), sizeMisc);
    store<u16>(cEvent + (r << 1), event);
    store<u32>(cOffset + (r << 2), o);
    store<u32>(cPid + (r << 2), load<u32>(p + sPidTid));
    store<u32>(cTid + (r << 2), load<u32>(p + sPidTid, 4));
    store<u32>(cCpu + (r << 2), load<u32>(p + sCpu));
    store<u32>(cIpLo + (r << 2), load<u32>(p + sIp));
    store<u32>(cIpHi + (r << 2), load<u32>(p + sIp, 4));
    // end row-writer
    if (falling) {
      previous = rel;
    } else {
      if (rel < minRel) {
        minRel = rel;
        minP = p;
      }
      if (rel > maxRel) {
        maxRel = rel;
        maxP = p;
      }
    }
    // falling: the next record is where the size before says while sizes repeat. p then waits for
    // a branch the CPU predicts rather than for this record's header, so the next record's loads
    // start before this one's arrive (p += size made every record wait for the load before it:
    // 16 MiB callchain+RAW rings, 24% less time a decode; the store keeps the branch a branch).
    if (falling) {
      if (size != expected) {
        expected = size;
        store<u32>(job, p - src, SAMPLE_O);
      }
      p += expected;
    } else {
      p += size;
    }
    row += step;
    if (falling) {
      // The falling loop takes a second record in the same pass: the same code as above (falling,
      // so the recorder's layout, whose id lies inside the sMin bytes). TurboFan
      // puts an interrupt check and the reloads of a dozen spilled values at every loop's back edge,
      // so two records a pass pay them once (1 MiB callchain+RAW: 6-8% less time a decode; gcc's
      // walker.c, which has neither, ran no faster unrolled).
      if (row <= stopRow) break;
      if (p + 8 > end) break;
      const sizeMisc = load<u32>(p, 4);
      const size = sizeMisc >>> 16;
      if (load<u32>(p) != RECORD_SAMPLE) break;
      if (size < sMin) break;
      if (size & 7) break;
      if (p + size > end) break;
      if (load<u64>(p + sId) != id) break;
      const t = load<u64>(p + sTime);
      if (<i64>t < 0) break;
      const rel = <f64>(<i64>(t - base));
      if (!(rel < previous)) break;
      const r = <u32>row;
      const o = p - src;
      // row-writer as-store type=RECORD_SAMPLE omit=ring row=r p=p o=o time=rel misc=sizeMisc event=event pidTid=sPidTid cpu=sCpu ip=sIp
      // (generated from column-schema.ts by scripts/build-row-writers.mjs: edit the schema, then npm run build)
      store<f64>(cTime + (r << 3), rel);
      store<u8>(cKind + r, RECORD_SAMPLE);
      store<u16>(cMisc + (r << 1), sizeMisc);
      store<u16>(cEvent + (r << 1), event);
      store<u32>(cOffset + (r << 2), o);
      store<u32>(cPid + (r << 2), load<u32>(p + sPidTid));
      store<u32>(cTid + (r << 2), load<u32>(p + sPidTid, 4));
      store<u32>(cCpu + (r << 2), load<u32>(p + sCpu));
      store<u32>(cIpLo + (r << 2), load<u32>(p + sIp));
      store<u32>(cIpHi + (r << 2), load<u32>(p + sIp, 4));
      // end row-writer
      previous = rel;
      if (size != expected) {
        expected = size;
        store<u32>(job, p - src, SAMPLE_O);
      }
      p += expected;
      row += step;
    }
  }
  if (falling && row != firstRow) {
    // As the per-record tests would have it: the first record is the largest of the run, the last the smallest.
    const first = load<f64>(cTime + (<u32>firstRow << 3));
    if (first > maxRel) {
      maxRel = first;
      maxP = firstP;
    }
    if (previous < minRel) {
      minRel = previous;
      minP = src + load<u32>(cOffset + (<u32>(row - step) << 2));
    }
  }
  // minAt / maxAt: the u32 index of the bounding time in the ring, as the JavaScript loop keeps it.
  if (minP != 0) store<u32>(job, (minP - src + sTime) >>> 2, SAMPLE_MIN_AT);
  if (maxP != 0) store<u32>(job, (maxP - src + sTime) >>> 2, SAMPLE_MAX_AT);
  store<u32>(job, p - src, SAMPLE_O);
  store<i32>(job, row, SAMPLE_ROW);
  store<f64>(job, minRel, SAMPLE_MIN_REL);
  store<f64>(job, maxRel, SAMPLE_MAX_REL);
  return (row - firstRow) * step;
}
