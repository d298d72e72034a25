// The overwrite note of a run whose rings grew: the ring a resize retired is cut where its successor took over, and
// when the swap outlasted the old ring the cut leaves none of its records. What it wrote before the successor started
// was still overwritten, and the estimate counts it (from its bytes written, data_head less the cut): the note must not
// read "kept N of about N". The rings are real ring layouts (test-records), cut by the recorder's own dropFrom and
// decoded by the real decoder.
import * as assert from 'node:assert/strict';
import { Sample } from '../abi/uapi';
import { decodeSnapshot } from '../decode/columns';
import { describeLosses } from '../decode/losses';
import { attrOf, eventOf, ringFromRecords, sampleRecord } from '../decode/test-records';
import { dropFrom, oldestSampleTime } from './ring-growth';

const SAMPLE_TYPE = Sample.IDENTIFIER | Sample.IP | Sample.TID | Sample.TIME;
const samples = (first: number, last: number) => {
  const records: Uint8Array[] = [];
  for (let time = first; time <= last; time++) {
    records.push(sampleRecord(SAMPLE_TYPE, { id: 7n, ip: 0x401000n, pid: 5, tid: 5, time: BigInt(time) * 1_000_000n }));
  }
  return records;
};
const CONTEXT = { pageBytes: 4096, pagesOption: '--pages' };
const TIMING = { takenAtMs: 2000, recordingStartedAtMs: 0 };

/** The note for a retired ring that recorded samples 1..retiredLast and a grown successor that recorded successorFirst..400. */
function noteFor(retiredLast: number, successorFirst: number): { note: string; kept: number; about: number } {
  const retired = ringFromRecords(samples(1, retiredLast), 1024, 'backward', { ringId: 0, cpu: 0 });
  const successor = ringFromRecords(samples(successorFirst, 400), 64 * 1024, 'backward', { ringId: 1, cpu: 0 });
  const cut = dropFrom(retired, oldestSampleTime(successor)!);
  const decoded = decodeSnapshot({ events: [eventOf(0, attrOf(SAMPLE_TYPE), [7n])], rings: [cut, successor], takenAtMs: 2000, pauseWindowNs: [] });
  const report = describeLosses(decoded, TIMING, CONTEXT);
  assert.ok(report.overwritten, 'the retired ring overwrote its start: the note says so');
  const said = /([\d,]+) of about ([\d,]+) records/.exec(report.overwritten);
  assert.ok(said, report.overwritten);
  return { note: report.overwritten, kept: Number(said[1].replace(/,/g, '')), about: Number(said[2].replace(/,/g, '')) };
}

describe('the overwrite note of rings that grew', () => {
  it('counts what a retired ring wrote before its successor started, when the cut left none of its records', () => {
    // 200 samples of 40 bytes through a 1 KiB ring (it keeps the last 25); the successor started at sample 170, so
    // everything the old ring still holds (176..200) is in the successor and the cut leaves nothing.
    const { note, kept, about } = noteFor(200, 170);
    assert.equal(kept, 231, note);
    assert.match(note, /^kept the last 0\.2 s of 2\.0 s: /, "what is kept is whole from the successor's oldest sample on");
    // Written in all: samples 1..400, once each. The few the old ring overwrote while both recorded (170..175) count
    // twice: the estimate is off by at most what the swap's overlap outlasted the old ring.
    assert.ok(Math.abs(about - 400) <= 8, `about ${about} records where 400 were written: ${note}`);
  });

  it('counts what retired rings the snapshot no longer holds wrote (closed by a keeper, or dropped once the grown rings wrapped)', () => {
    // Only the successor is copied; the retired ring that recorded samples 1..169 before it (6,760 bytes) was closed.
    const successor = ringFromRecords(samples(170, 400), 64 * 1024, 'backward', { ringId: 1, cpu: 0 });
    const decoded = decodeSnapshot({ events: [eventOf(0, attrOf(SAMPLE_TYPE), [7n])], rings: [successor], takenAtMs: 2000, pauseWindowNs: [] });
    assert.equal(describeLosses(decoded, TIMING, CONTEXT).overwritten, undefined, 'without the count, nothing looks overwritten');
    const report = describeLosses(decoded, { ...TIMING, retiredBytesLeftOut: 169n * 40n }, CONTEXT);
    assert.match(report.overwritten ?? '', /^kept the last 0\.2 s of 2\.0 s: 231 of about 400 records; the rings overwrote the rest \(--pages 8 keeps it all/);
  });

  it("counts it as before when the cut leaves some of the retired ring's records", () => {
    const { note, kept, about } = noteFor(200, 190);
    assert.ok(kept > 211 && kept <= 236, note);
    assert.ok(Math.abs(about - 400) <= 8, `about ${about} records where 400 were written: ${note}`);
  });
});
