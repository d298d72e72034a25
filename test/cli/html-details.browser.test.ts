// The offline page's details of every record of a real `perf record -a -g` capture are the ones the live panel's host
// makes (rowDetails): the export embeds each distinct callchain once, as a stack table, and its stand-in host puts a
// record's callchain back on request. Checked in Chromium, record by record, as JSON text (key order included).
import * as assert from 'node:assert/strict';
import path from 'node:path';
import { writeStandaloneHtml } from '../../host/html-file';
import { rowDetails } from '../../host/wire';
import { chromiumAndTempDir } from '../webview/harness';
import { perfRecord, openNamed } from '../perfdata/perf-tools';

/** What the page answers for one row: its details as JSON text, or the error code. */
type Answer = { readonly json: string } | { readonly error: string };

describe('exported page: every record’s details rebuilt from the stack table (perf record -a -g)', function () {
  this.timeout(300000);
  const env = chromiumAndTempDir('ringside-perfdata-');

  it('gives, for every record, exactly the details rowDetails makes', async () => {
    const data = path.join(env.dir, 'a.data');
    // System-wide with callchains while a shell loop runs: user and kernel frames of many processes.
    perfRecord(data, ['-a', '-g'], ['sh', '-c', 'i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done']);
    const { decoded, symbols } = openNamed(data);
    const page = path.join(env.dir, 'a.html');
    writeStandaloneHtml(page, decoded, symbols.frames);
    // The details as the export embedded them before it had a stack table: rowDetails per row.
    const expected: (string | undefined)[] = [];
    for (let row = 0; row < decoded.columns.length; row++) {
      try {
        expected.push(JSON.stringify(rowDetails(decoded, row, symbols.frames)));
      } catch {
        // a record that does not decode has no details in the export either (writeStandaloneHtml skips it)
        expected.push(undefined);
      }
    }

    const tab = await env.browser.newPage();
    const problems: string[] = [];
    tab.on('pageerror', (error) => problems.push(String(error)));
    await tab.goto('file://' + page);
    await tab.waitForFunction(() => document.querySelector('.rs-lane-label') !== null, undefined, { timeout: 60000 });
    const snapshotId = await tab.evaluate(() => {
      const text = document.getElementById('ringside-standalone-data')!.textContent!;
      return (JSON.parse(text) as { snapshots: { start: { snapshotId: string } }[] }).snapshots[0].start.snapshotId;
    });
    let withCallchain = 0;
    let kernelFrames = 0;
    let embedded = 0;
    const chunk = 2000;
    for (let first = 0; first < decoded.columns.length; first += chunk) {
      const rows = Array.from({ length: Math.min(chunk, decoded.columns.length - first) }, (_, i) => first + i);
      const answers = await tab.evaluate(
        ({ rows, snapshotId }) =>
          new Promise<Answer[]>((resolve) => {
            // Request ids far above the page's own, so the timeline ignores these replies.
            const base = 1_000_000_000;
            const out: Answer[] = new Array(rows.length);
            let left = rows.length;
            const api = (window as unknown as { acquireVsCodeApi(): { postMessage(m: unknown): void } }).acquireVsCodeApi();
            const listen = (event: MessageEvent) => {
              const m = event.data as { type?: string; replyTo?: number; details?: unknown; error?: { code: string } };
              if (m?.type !== 'detailsReply' || m.replyTo === undefined || m.replyTo < base) return;
              out[m.replyTo - base] = m.details ? { json: JSON.stringify(m.details) } : { error: m.error?.code ?? '?' };
              if (--left === 0) {
                window.removeEventListener('message', listen);
                resolve(out);
              }
            };
            window.addEventListener('message', listen);
            rows.forEach((row, i) => api.postMessage({ type: 'detailsRequest', requestId: base + i, snapshotId, row }));
          }),
        { rows, snapshotId },
      );
      answers.forEach((answer, i) => {
        const row = rows[i];
        const want = expected[row];
        if ('json' in answer) {
          embedded++;
          assert.equal(answer.json, want, `row ${row}: the page's details differ from rowDetails`);
          const details = JSON.parse(answer.json) as { callchain?: { kernel?: boolean }[] };
          if (details.callchain && details.callchain.length > 0) withCallchain++;
          kernelFrames += details.callchain?.filter((frame) => frame.kernel).length ?? 0;
        } else {
          assert.equal(answer.error, 'ENODETAILS', `row ${row}`);
          // Only rows past the embedding limit or that do not decode go without details.
          assert.ok(want === undefined || row >= 20000, `row ${row} has details the page lost`);
        }
      });
    }
    await tab.close();
    assert.deepEqual(problems, []);
    assert.ok(
      embedded > 0 && withCallchain > 0 && kernelFrames > 0,
      `${embedded} rows with details, ${withCallchain} with a callchain, ${kernelFrames} kernel frames`,
    );
    console.log(`      ${embedded} records' details equal, ${withCallchain} with a callchain, ${kernelFrames} kernel frames`);
  });
});
