// "Log Values at This Line" in the editor's logic, on the real kernel, under a small stand-in for the
// `vscode` module: a logpoint on a line of test/fixtures/logpoint_values.c runs the program, and after
// the snapshot the line shows the hit count and each variable's last value and number of distinct
// values, its hover every distinct value, each hit's record carries the values (the details drawer's
// fields), and a JSON Lines export has them. The values themselves are checked against gdb in
// test/kernel/logpoint-gdb.test.ts; here, that they reach the editor, for the program's own facts:
// 12 rounds, one hit each, i from 0 to 11, mode RUN until the last round.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SessionManager } from '../../extension/session/session-manager';
import { createBackend } from '../../extension/session/backend';
import { decodeRecordAt } from '../../native/decode/record';
import { RecordType } from '../../native/abi/uapi';
import { fixture, ownPerfFds, repoRoot, standInVscode, waitFor } from './helpers';

interface Decoration {
  range: { start: { line: number } };
  renderOptions: { after: { contentText: string } };
}

const source = path.join(repoRoot, 'test/fixtures/logpoint_values.c');
const decorations: Decoration[][] = [];

function logpointVscode() {
  const disposable = {
    dispose() {
      /* nothing held */
    },
  };
  class Position {
    constructor(
      readonly line: number,
      readonly character: number,
    ) {}
  }
  class Range {
    readonly start: Position;
    constructor(line: number, character: number, endLine: number, endCharacter: number) {
      this.start = new Position(line, character);
      void endLine;
      void endCharacter;
    }
  }
  class MarkdownString {
    isTrusted = true;
    constructor(public value = '') {}
    appendText(text: string) {
      this.value += text;
      return this;
    }
  }
  class Hover {
    constructor(readonly contents: MarkdownString) {}
  }
  const editor = { document: { uri: { fsPath: source } }, setDecorations: (_type: unknown, list: Decoration[]) => decorations.push(list) };
  return {
    Position,
    Range,
    MarkdownString,
    Hover,
    ThemeColor: class {
      constructor(readonly id: string) {}
    },
    window: { createTextEditorDecorationType: () => disposable, onDidChangeVisibleTextEditors: () => disposable, visibleTextEditors: [editor] },
    languages: { registerHoverProvider: () => disposable },
  };
}

describe('extension: Log Values at This Line', function () {
  this.timeout(60_000);
  let restoreVscode = () => {
    /* installed in before() */
  };
  let dir: string;
  before(() => {
    assert.equal(process.getuid?.(), 0, 'a logpoint is a uprobe: root or CAP_PERFMON (the refusal is tested as uid 65534)');
    restoreVscode = standInVscode(logpointVscode());
    dir = mkdtempSync(path.join(tmpdir(), 'ringside-logpoints-'));
  });
  after(() => {
    restoreVscode();
    rmSync(dir, { recursive: true, force: true });
  });

  it("shows the last values, hits and distinct values at the line, every hit's values in its record, and exports them", async () => {
    const { Logpoints } = await import('../../extension/editor/logpoints');
    const fdsBefore = ownPerfFds().length;
    const backend = createBackend();
    const manager = new SessionManager({ backend });
    const binary = fixture('logpoint_values_O0');
    const line =
      readFileSync(source, 'utf8')
        .split('\n')
        .findIndex((text) => text.includes('// LOG-LOOP')) + 1;
    const logpoints = new Logpoints(
      manager,
      async () => ({ target: { kind: 'launch', argv: [binary, '12'] }, executable: binary }),
      () => undefined,
    );
    try {
      await logpoints.logValuesAtLine({ fsPath: source } as never, line);
      const [armed] = logpoints.list();
      assert.equal(armed.spec, `log:logpoint_values.c:${line}`);
      assert.match(decorations.at(-1)![0].renderOptions.after.contentText, /capture a snapshot/, 'the line says what it waits for');
      await manager.whenTargetExited(armed.sessionId);
      const entry = await manager.snapshot(armed.sessionId);
      const tally = await waitFor('the tally of the snapshot', () => logpoints.list()[0].tally);
      assert.equal(tally.hits, 12, 'one hit per round');
      const shown = decorations.at(-1)!;
      assert.equal(shown.length, 1);
      assert.equal(shown[0].range.start.line, line - 1);
      const text = shown[0].renderOptions.after.contentText;
      assert.ok(text.startsWith('log: 12 hits · rounds = 12 · tag = 0x'), text);
      // The line is cut to its first 160 characters; the hover has every variable.
      assert.ok(text.includes(' · slot = 3 (4 distinct) · '), text);

      const hover = logpoints.provideHover({ uri: { fsPath: source } } as never, { line: line - 1, character: 0 } as never) as unknown as {
        contents: { value: string };
      };
      assert.match(hover.contents.value, /^mode = MODE_DONE \(2 distinct: MODE_RUN ×11, MODE_DONE ×1\)$/m);
      assert.match(hover.contents.value, /^rounds = 12 \(always\)$/m);
      assert.match(hover.contents.value, /^i = 11 \(12 distinct: 0 ×1, 1 ×1, 2 ×1, 3 ×1, 4 ×1, 7 more\)$/m);

      // The details drawer shows a record's decoded fields: the hit's values are among them.
      const rows: number[] = [];
      for (let row = 0; row < entry.decoded.columns.length; row++) if (entry.decoded.columns.kind[row] === RecordType.SAMPLE) rows.push(row);
      const first = decodeRecordAt(entry.decoded, rows[0]).fields as { values?: Record<string, string>; function?: string; stackUser?: unknown };
      assert.equal(first.function, 'work');
      assert.equal(first.values?.i, '0');
      assert.equal(first.values?.hist, '{0, 0, 0, 0}');
      assert.equal(first.stackUser, undefined, 'the values take the place of the 8 KiB stack copy');

      const file = path.join(dir, 'values.jsonl');
      await manager.exportSnapshot(entry.id, 'jsonl', file);
      const hits = readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((text) => JSON.parse(text) as { type: string; values?: Record<string, string> })
        .filter((record) => record.type === 'SAMPLE');
      assert.deepEqual(
        hits.map((hit) => hit.values?.i),
        Array.from({ length: 12 }, (_, i) => String(i)),
      );
    } finally {
      await manager.dispose();
      logpoints.dispose();
    }
    assert.equal(ownPerfFds().length, fdsBefore, 'every perf fd is closed');
  });
});
