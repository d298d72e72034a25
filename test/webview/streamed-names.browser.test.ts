// Browser test of a capture streamed as the panel streams it: its records first (snapshotToWire with namesFollow, the
// page paints them and says names are still coming), its names after (snapshotNamesMessage). Once they are in, the
// page shows exactly what it shows for the same capture sent in one piece, names with the records (what the HTML
// export and live follow send): every row's time, thread, symbol and stack, the lanes and their counts, the call tree.
// The messages are the host's own (host/wire.ts) for a decoded snapshot with callchains; the built bundle in Debian
// Chromium through playwright-core.

import * as assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { decodeSnapshot } from '../../native/decode/columns';
import { attrOf, ByteWriter, eventOf, otherRecord, ringFromRecords, sampleRecord } from '../../native/decode/test-records';
import { RecordType, Sample } from '../../native/abi/uapi';
import { FrameSymbols } from '../../host/frame-symbols';
import { snapshotNames, snapshotNamesMessage, snapshotToWire } from '../../host/wire';
import type { HostToWebview } from '../../shared/protocol';
import { afterFrames, openTimelinePage, type TimelineSession } from './harness';

const SAMPLE_TYPE = Sample.IP | Sample.TID | Sample.TIME | Sample.CALLCHAIN;
const USER_CONTEXT = 0xfffffffffffffe00n;
/** Functions by address; 0x409000 has no name (the page says [unknown]). */
const FUNCTIONS = new Map<bigint, string>([
  [0x401000n, 'main'],
  [0x402000n, 'parse_line'],
  [0x403000n, 'hash_block'],
  [0x404000n, 'write_log'],
  [0x405000n, 'memcpy'],
]);
const THREADS = [
  { pid: 42, tid: 42, comm: 'demo' },
  { pid: 42, tid: 43, comm: 'parser' },
  { pid: 42, tid: 44, comm: 'hasher' },
  { pid: 77, tid: 77, comm: 'other' },
];
const SAMPLES = 600;

/** A decoded capture of four threads in two processes whose samples have callchains of known functions. */
function capture() {
  const records: Uint8Array[] = [];
  for (const t of THREADS) {
    const name = new TextEncoder().encode(t.comm.padEnd(8, '\0').slice(0, 8));
    records.push(otherRecord(RecordType.COMM, 0, new ByteWriter().u32(t.pid).u32(t.tid).raw(name).toBytes()));
  }
  const leaves = [0x402010n, 0x403020n, 0x404030n, 0x405040n, 0x409000n];
  for (let i = 0; i < SAMPLES; i++) {
    const thread = THREADS[i % THREADS.length];
    const leaf = leaves[(i * 7) % leaves.length];
    const callers = i % 3 === 0 ? [0x401010n] : [0x402020n, 0x401010n];
    const chain = [USER_CONTEXT, leaf, ...callers];
    const tail = new ByteWriter().u64(BigInt(chain.length));
    for (const ip of chain) tail.u64(ip);
    records.push(sampleRecord(SAMPLE_TYPE, { ip: leaf, pid: thread.pid, tid: thread.tid, time: 1_000_000n + BigInt(i) * 10_000n, tail: tail.toBytes() }));
  }
  return decodeSnapshot({ events: [eventOf(0, attrOf(SAMPLE_TYPE), [], 'task-clock')], rings: [ringFromRecords(records, 1 << 20, 'backward')] });
}

function symbols(): FrameSymbols {
  return new FrameSymbols((_pid, ip) => {
    const base = ip & ~0xfffn;
    const name = FUNCTIONS.get(base);
    return name === undefined ? undefined : `${name}+0x${(ip - base).toString(16)}`;
  });
}

/** A message as plain data for page.evaluate: each ArrayBuffer as its bytes, made one again in the page. */
type Plain = unknown;
function toPlain(value: unknown): Plain {
  if (value instanceof ArrayBuffer) return { __bytes: Array.from(new Uint8Array(value)) };
  if (Array.isArray(value)) return value.map(toPlain);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toPlain(v)]));
  return value;
}

interface Probe {
  __send(m: unknown): void;
  ringside: {
    store: {
      length: number;
      time: Float64Array;
      symbolOf(row: number): string | null;
      stackFunctionsOf(row: number): readonly string[];
      valueAt(name: string, row: number): number;
    };
  };
}

async function send(page: Page, messages: readonly HostToWebview[]): Promise<void> {
  await page.evaluate((plain) => {
    const revive = (v: unknown): unknown => {
      if (Array.isArray(v)) return v.map(revive);
      if (v && typeof v === 'object') {
        const o = v as Record<string, unknown>;
        if (Array.isArray(o.__bytes)) return new Uint8Array(o.__bytes as number[]).buffer;
        return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, revive(x)]));
      }
      return v;
    };
    for (const m of plain as unknown[]) (window as unknown as Probe).__send(revive(m));
  }, toPlain(messages));
}

const status = async (page: Page) => (await page.locator('.rs-status').textContent()) ?? '';

/** What the page shows of its capture: every row as the store holds it, the lanes, the canvas's summary and the call tree. */
async function shown(page: Page) {
  await afterFrames(page);
  return page.evaluate(() => {
    const store = (window as unknown as Probe).ringside.store;
    const rows: string[] = [];
    for (let r = 0; r < store.length; r++)
      rows.push(`${store.time[r]} ${store.valueAt('tid', r)} ${store.symbolOf(r) ?? '-'} ${store.stackFunctionsOf(r).join(';')}`);
    const lanes = [...document.querySelectorAll<HTMLElement>('.rs-lane-label')].map(
      (label) => `${label.dataset.lane} ${label.querySelector('.rs-lane-name')?.textContent} ${label.querySelector('.rs-lane-count')?.textContent}`,
    );
    const callTree = [...document.querySelectorAll('.rs-calltree-node, .rs-function-row')].map((row) => (row.textContent ?? '').replace(/\s+/g, ' ').trim());
    return { rows, lanes, canvas: document.querySelector('canvas.rs-canvas')?.getAttribute('aria-label'), callTree };
  });
}

describe('a capture streamed records first, names after (Chromium)', function () {
  this.timeout(60000);
  let session: TimelineSession;
  const errors: string[] = [];

  before(async () => {
    session = await openTimelinePage({ errors });
  });
  after(() => session?.close());

  it('paints the records at once, says names are coming, and ends as the capture sent in one piece', async () => {
    const decoded = capture();
    const options = { snapshotId: 's1', name: 'demo · 12:00:00.000', takenAtMs: 1, symbols: symbols(), batchRows: 128 };
    const whole = snapshotToWire(decoded, options);
    const streamed = snapshotToWire(decoded, { ...options, namesFollow: true });
    assert.ok(streamed.batches.length > 1, 'several batches');
    assert.equal(streamed.start.namesFollow, true);
    assert.equal(streamed.start.stacks, undefined, 'no names with the records');
    assert.ok(
      streamed.batches.every((batch) => batch.symbolIndex === undefined && batch.stackIndex === undefined),
      'no names in the batches',
    );
    const names = snapshotNamesMessage('s1', snapshotNames(decoded, symbols()));
    const total = decoded.columns.length;

    const oneShot = session.page;
    await send(oneShot, [whole.start, ...whole.batches]);
    await oneShot.waitForFunction((n) => document.querySelector('.rs-status')?.textContent?.startsWith(`${n.toLocaleString('en-US')} records`), total);

    const page = await session.newPage();
    await send(page, [streamed.start, ...streamed.batches]);
    await page.waitForFunction((n) => document.querySelector('.rs-status')?.textContent?.startsWith(`${n.toLocaleString('en-US')} records`), total);
    assert.match(await status(page), /function names still coming/);
    const before = await shown(page);
    assert.match(before.canvas ?? '', new RegExp(`^Timeline: ${total} records in \\d+ lanes$`), 'the records are painted before the names');
    assert.ok(
      before.rows.every((row) => row.endsWith(' - ')),
      'no row has a name yet',
    );

    await send(page, [names]);
    await page.waitForFunction(() => !document.querySelector('.rs-status')?.textContent?.includes('names'));
    const after = await shown(page);
    const expected = await shown(oneShot);
    assert.ok(expected.rows.some((row) => row.includes('parse_line;main')) && expected.callTree.length > 0, JSON.stringify(expected.callTree));
    assert.deepEqual(after.rows, expected.rows, 'every row: time, thread, symbol, stack');
    assert.deepEqual(after.lanes, expected.lanes);
    assert.equal(after.canvas, expected.canvas);
    assert.deepEqual(after.callTree, expected.callTree);
    assert.equal(await status(page), await status(oneShot));
    // A second copy of the names (the host sends them again after a resync) changes nothing.
    await send(page, [names]);
    assert.deepEqual((await shown(page)).rows, expected.rows);
    assert.deepEqual(errors, []);
  });

  it("shows the host's work once it has taken a second, with a Cancel that tells the host, until it is done", async () => {
    const page = await session.newPage();
    const progress = (extra: Record<string, unknown> = {}) => ({ type: 'progress', taskId: 'task-1', title: 'opening big.data', cancellable: true, ...extra });
    await page.evaluate((m) => (window as unknown as Probe).__send(m), progress());
    await page.evaluate((m) => (window as unknown as Probe).__send(m), progress({ step: 'reading and decoding' }));
    await afterFrames(page);
    assert.equal(await page.locator('.rs-task').count(), 0, 'nothing within the first second');
    await page.locator('.rs-task', { hasText: 'opening big.data: reading and decoding' }).waitFor({ state: 'visible' });
    await page.click('.rs-task-cancel');
    await page.waitForFunction(() =>
      (window as unknown as { __posted: { type: string; taskId?: string }[] }).__posted.some((m) => m.type === 'cancel' && m.taskId === 'task-1'),
    );
    await page.evaluate((m) => (window as unknown as Probe).__send(m), progress({ done: true }));
    await page.locator('.rs-task').waitFor({ state: 'detached' });
    assert.deepEqual(errors, []);
  });
});
