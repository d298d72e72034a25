// One slice of the scatter merge (scatter.ts: MergeCursor over the rings' keys, scatterFastRuns'
// rows) as WebAssembly, for a snapshot whose flight-recorder copies, their keys and the output
// columns live in one WebAssembly memory (wasm/snapshot-memory.ts). It picks runs as MergeCursor does
// (the running maximum of time + shift inside each ring, ties to the lower ring number; the run
// goes on while its ring still beats the best other one) and writes each keyed record's row from
// the ring bytes, the same fields scatterFastRuns writes. Rows of rings decoded elsewhere (side-band
// rings: few rows, in memory of their own) are "holes": the call writes only where each goes, and
// the caller copies them there. A uniform ring's records (uniform.ts) are read in place: record
// `i` of the slice at a fixed stride below the oldest, its time from the record; each is checked as
// it is written (of the ring's size, a sample of the ring's id or another record whose trailer holds
// its time, that time no newer than the newest and no older than the one before it), and the first
// that is not stops the call, marked failed. Other records are listed, as a keyed ring's are.
//
// The slice's rings are entries of a job record the caller fills (wasm/job-layout.ts); the output
// columns' addresses, the sample's field offsets and the event are in the job's header.

import {
  ENTRY_AUX,
  ENTRY_BASE,
  ENTRY_HOLE,
  ENTRY_ID,
  ENTRY_KEY,
  ENTRY_KEYED_WITH_OTHERS,
  ENTRY_KIND,
  ENTRY_NEXT,
  ENTRY_POSITION,
  ENTRY_SHIFT,
  ENTRY_SRC,
  ENTRY_STOP,
  ENTRY_TIME,
  ENTRY_UNIFORM,
  MERGE_AT,
  MERGE_COLUMNS,
  MERGE_ENTRY_BYTES,
  MERGE_EVENT,
  MERGE_FAILED,
  MERGE_HEADER_BYTES,
  MERGE_LIST,
  MERGE_OTHERS,
  MERGE_OTHER_TIME_FROM_END,
  MERGE_RINGS,
  MERGE_S_CPU,
  MERGE_S_ID,
  MERGE_S_IP,
  MERGE_S_PID_TID,
  MERGE_S_TIME,
  OTHER_BYTES,
  OTHER_POSITION,
  RECORD_SAMPLE,
} from '../wasm/job-layout';
import { RECORDER_S_CPU, RECORDER_S_ID, RECORDER_S_IP, RECORDER_S_PID_TID, RECORDER_S_TIME } from './sample';

/**
 * Writes the slice the job describes (wasm/job-layout.ts: the header, then an entry per ring) from
 * output row `at` on; returns the rows it placed (written, or for holes and others, located), with
 * the records it listed and whether a uniform ring's record was not one in the header.
 */
export function mergeScatter(job: usize): i32 {
  if (
    load<i32>(job, MERGE_S_PID_TID) == RECORDER_S_PID_TID &&
    load<i32>(job, MERGE_S_CPU) == RECORDER_S_CPU &&
    load<i32>(job, MERGE_S_IP) == RECORDER_S_IP &&
    load<i32>(job, MERGE_S_TIME) == RECORDER_S_TIME &&
    load<i32>(job, MERGE_S_ID) == RECORDER_S_ID
  )
    return merge(job, true);
  return merge(job, false);
}

/** The merge; `recorderLayout`: samples of the recorder's layout, whose field offsets are then constants of this copy. */
@inline
function merge(job: usize, recorderLayout: bool): i32 {
  const n = load<i32>(job, MERGE_RINGS);
  const at = load<i32>(job, MERGE_AT);
  const list = load<u32>(job, MERGE_LIST);
  // row-writer as-column-addresses job=job base=MERGE_COLUMNS
  // (generated from column-schema.ts by scripts/build-row-writers.mjs: edit the schema, then npm run build)
  const cTime = load<u32>(job, MERGE_COLUMNS + 0);
  const cKind = load<u32>(job, MERGE_COLUMNS + 4);
  const cMisc = load<u32>(job, MERGE_COLUMNS + 8);
  const cEvent = load<u32>(job, MERGE_COLUMNS + 12);
  const cPid = load<u32>(job, MERGE_COLUMNS + 16);
  const cTid = load<u32>(job, MERGE_COLUMNS + 20);
  const cCpu = load<u32>(job, MERGE_COLUMNS + 24);
  const cIpHi = load<u32>(job, MERGE_COLUMNS + 28);
  const cIpLo = load<u32>(job, MERGE_COLUMNS + 32);
  const cRing = load<u32>(job, MERGE_COLUMNS + 36);
  const cOffset = load<u32>(job, MERGE_COLUMNS + 40);
  // end row-writer
  const sPidTid: u32 = recorderLayout ? RECORDER_S_PID_TID : load<u32>(job, MERGE_S_PID_TID);
  const sCpu: u32 = recorderLayout ? RECORDER_S_CPU : load<u32>(job, MERGE_S_CPU);
  const sIp: u32 = recorderLayout ? RECORDER_S_IP : load<u32>(job, MERGE_S_IP);
  const sTime: u32 = recorderLayout ? RECORDER_S_TIME : load<u32>(job, MERGE_S_TIME);
  const sId: i32 = recorderLayout ? RECORDER_S_ID : load<i32>(job, MERGE_S_ID);
  const otherTimeFromEnd = load<i32>(job, MERGE_OTHER_TIME_FROM_END);
  const event = load<u32>(job, MERGE_EVENT);
  const entries = job + MERGE_HEADER_BYTES;
  let others: u32 = 0;
  let failed = 0;
  let to: u32 = at;
  for (;;) {
    // The ring with the smallest (key, ring) holding rows, and the next smallest (its rival).
    let best = -1;
    let rival = -1;
    for (let r = 0; r < n; r++) {
      const e = entries + r * MERGE_ENTRY_BYTES;
      if (load<i32>(e, ENTRY_NEXT) >= load<i32>(e, ENTRY_STOP)) continue;
      if (best < 0) {
        best = r;
      } else if (load<f64>(e, ENTRY_KEY) < load<f64>(entries + best * MERGE_ENTRY_BYTES, ENTRY_KEY)) {
        rival = best;
        best = r;
      } else if (rival < 0 || load<f64>(e, ENTRY_KEY) < load<f64>(entries + rival * MERGE_ENTRY_BYTES, ENTRY_KEY)) {
        rival = r;
      }
    }
    if (best < 0) break;
    // The run: rows of `best` while its key stays below the rival's (or equal, when best's number is lower).
    const rivalKey = rival >= 0 ? load<f64>(entries + rival * MERGE_ENTRY_BYTES, ENTRY_KEY) : Infinity;
    const tie = best < rival;
    const be = entries + best * MERGE_ENTRY_BYTES;
    let i = load<i32>(be, ENTRY_NEXT);
    const stop = load<i32>(be, ENTRY_STOP);
    const tAddr = load<u32>(be, ENTRY_TIME);
    const aux = load<u32>(be, ENTRY_AUX);
    const src = load<u32>(be, ENTRY_SRC);
    const shift = load<f64>(be, ENTRY_SHIFT);
    let k = load<f64>(be, ENTRY_KEY);
    const kind = load<i32>(be, ENTRY_KIND);
    if (kind == ENTRY_UNIFORM) {
      // Rows i.. of `best` from the records at tAddr - i * stride, each record checked before its row
      // is written and each time before it becomes the key. A record that is not a sample is listed
      // for the caller (its time from its trailer). A check that fails ends the call, failed.
      const base = load<i64>(be, ENTRY_BASE);
      const id = load<u64>(be, ENTRY_ID);
      let p = <usize>(tAddr - <u32>i * aux);
      let ty = load<u32>(p);
      let value: f64 = 0;
      // The record at p's time, shifted: a sample's from its time field, another record's from its trailer.
      let d: i64 = 0;
      if (ty == RECORD_SAMPLE) d = load<i64>(p + sTime) - base;
      else if (otherTimeFromEnd >= 0) d = load<i64>(p + aux - otherTimeFromEnd) - base;
      else {
        failed = 1;
        break;
      }
      // Newer than the ring's newest: not a uniform ring.
      if (d > 0) {
        failed = 1;
        break;
      }
      value = <f64>d + shift;
      for (;;) {
        if (load<u32>(p, 4) >>> 16 != aux) {
          failed = 1;
          break;
        }
        if (ty == RECORD_SAMPLE) {
          if (sId >= 0 && load<u64>(p + sId) != id) {
            failed = 1;
            break;
          }
          const o = <u32>(p - src);
          const row = to;
          // row-writer as-store type=RECORD_SAMPLE row=row p=p o=o time=value event=event ring=best pidTid=sPidTid cpu=sCpu ip=sIp
          // (generated from column-schema.ts by scripts/build-row-writers.mjs: edit the schema, then npm run build)
          store<f64>(cTime + (row << 3), value);
          store<u8>(cKind + row, RECORD_SAMPLE);
          store<u16>(cMisc + (row << 1), load<u32>(p, 4));
          store<u16>(cEvent + (row << 1), event);
          store<u16>(cRing + (row << 1), best);
          store<u32>(cOffset + (row << 2), o);
          store<u32>(cPid + (row << 2), load<u32>(p + sPidTid));
          store<u32>(cTid + (row << 2), load<u32>(p + sPidTid, 4));
          store<u32>(cCpu + (row << 2), load<u32>(p + sCpu));
          store<u32>(cIpLo + (row << 2), load<u32>(p + sIp));
          store<u32>(cIpHi + (row << 2), load<u32>(p + sIp, 4));
          // end row-writer
        } else {
          listOther(list, others++, to, best, i);
        }
        to++;
        i++;
        if (i >= stop) break;
        p -= aux;
        ty = load<u32>(p);
        if (ty == RECORD_SAMPLE) d = load<i64>(p + sTime) - base;
        else if (otherTimeFromEnd >= 0) d = load<i64>(p + aux - otherTimeFromEnd) - base;
        else {
          failed = 1;
          break;
        }
        value = <f64>d + shift;
        // Keys never decrease in a uniform ring: a time older than the one before is a ring to key.
        if (d > 0 || value < k) {
          failed = 1;
          break;
        }
        k = value;
        if (!(k < rivalKey || (k == rivalKey && tie))) break;
      }
      if (failed) break;
    } else if (kind != ENTRY_HOLE) {
      const pos = load<u32>(be, ENTRY_POSITION);
      const withOthers = kind == ENTRY_KEYED_WITH_OTHERS;
      let t = load<f64>(tAddr + (<u32>i << 3));
      for (;;) {
        // A record that is not a plain sample: listed (row, ring, key) for the caller, which decodes it.
        // (Its position is read only in a ring that has such records.)
        if (withOthers && load<u16>(pos + (<u32>i << 1)) == OTHER_POSITION) {
          listOther(list, others++, to, best, i);
        } else {
          const o = load<u32>(aux + (<u32>i << 2));
          const p = <usize>(src + o);
          const row = to;
          const rowTime = t + shift;
          // row-writer as-store type=RECORD_SAMPLE row=row p=p o=o time=rowTime event=event ring=best pidTid=sPidTid cpu=sCpu ip=sIp
          // (generated from column-schema.ts by scripts/build-row-writers.mjs: edit the schema, then npm run build)
          store<f64>(cTime + (row << 3), rowTime);
          store<u8>(cKind + row, RECORD_SAMPLE);
          store<u16>(cMisc + (row << 1), load<u32>(p, 4));
          store<u16>(cEvent + (row << 1), event);
          store<u16>(cRing + (row << 1), best);
          store<u32>(cOffset + (row << 2), o);
          store<u32>(cPid + (row << 2), load<u32>(p + sPidTid));
          store<u32>(cTid + (row << 2), load<u32>(p + sPidTid, 4));
          store<u32>(cCpu + (row << 2), load<u32>(p + sCpu));
          store<u32>(cIpLo + (row << 2), load<u32>(p + sIp));
          store<u32>(cIpHi + (row << 2), load<u32>(p + sIp, 4));
          // end row-writer
        }
        to++;
        i++;
        if (i >= stop) break;
        t = load<f64>(tAddr + (<u32>i << 3));
        const value = t + shift;
        // A time below the running key (or none: NaN) keeps it.
        if (value > k) k = value;
        if (!(k < rivalKey || (k == rivalKey && tie))) break;
      }
    } else {
      for (;;) {
        store<u32>(aux + (<u32>i << 2), to);
        to++;
        i++;
        if (i >= stop) break;
        const value = load<f64>(tAddr + (<u32>i << 3)) + shift;
        if (value > k) k = value;
        if (!(k < rivalKey || (k == rivalKey && tie))) break;
      }
    }
    store<i32>(be, i, ENTRY_NEXT);
    store<f64>(be, k, ENTRY_KEY);
  }
  store<u32>(job, others, MERGE_OTHERS);
  store<i32>(job, failed, MERGE_FAILED);
  return to - at;
}

/** Lists row `to` as ring `ring`'s record `key`, one that is not a plain sample: the caller decodes it there. */
@inline
function listOther(list: u32, index: u32, to: u32, ring: i32, key: i32): void {
  const at = list + index * OTHER_BYTES;
  store<u32>(at, to, 0);
  store<i32>(at, ring, 4);
  store<i32>(at, key, 8);
}
