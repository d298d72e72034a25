// Logpoints in the editor: gutter and palette "Log Values at This Line". Each one is a recording
// session of its own whose event is `log:FILE:LINE` (a uprobe sampling registers and stack, see
// native/specs/resolve.ts); after each snapshot the line shows its hit count and each variable's last
// value and number of distinct values, and its hover every variable's distinct values. Each hit's
// values are in the record's fields (the timeline's details drawer) and in JSON Lines exports: the
// session manager gives its snapshots the host's value reader (session-manager.ts, addSnapshot).

import path from 'node:path';
import * as vscode from 'vscode';
import type { SessionManager } from '../session/session-manager';
import type { TargetChooser } from './editor-integration';
import { activeSessionTarget, resolveContextOf } from './session-target';
import { describeVariable, logpointInlineText, notCapturedLines, tallyLogpoints, type LogpointTally } from '../../native/decode/logpoint-tally';

interface ArmedLogpoint {
  readonly spec: string;
  readonly sessionId: string;
  readonly file: string;
  readonly line: number;
  tally?: LogpointTally;
}

/** The spec of a logpoint on a line of a file, as the CLI takes it. */
export function logpointSpec(file: string, line: number): string {
  return `log:${path.basename(file)}:${line}`;
}

export class Logpoints implements vscode.Disposable, vscode.HoverProvider {
  private readonly armed: ArmedLogpoint[] = [];
  private readonly disposables: vscode.Disposable[] = [];
  private readonly values = vscode.window.createTextEditorDecorationType({
    after: { color: new vscode.ThemeColor('editorCodeLens.foreground'), margin: '0 0 0 2em' },
  });

  constructor(
    private readonly manager: SessionManager,
    private readonly chooseTarget: TargetChooser,
    private readonly log: (line: string) => void,
    /** Data pages per ring (the ringside.bufferPages setting). */
    private readonly ringPages: () => number | undefined = () => undefined,
  ) {
    this.disposables.push(
      manager.onDidChange((change) => {
        if (change.what === 'snapshot') this.update(change.sessionId);
        if (change.what === 'removed') this.forget(change.sessionId);
      }),
      vscode.window.onDidChangeVisibleTextEditors(() => this.decorate()),
      vscode.languages.registerHoverProvider([{ language: 'c' }, { language: 'cpp' }], this),
    );
  }

  /** Starts logging the values at `line` of the file, in the active session's process or a target the user picks. */
  async logValuesAtLine(uri: vscode.Uri, line: number): Promise<void> {
    const chosen = activeSessionTarget(this.manager) ?? (await this.chooseTarget());
    if (!chosen) return;
    const context = resolveContextOf(chosen);
    const spec = logpointSpec(uri.fsPath, line);
    const events = await this.manager.backend.resolveEvents([spec], context);
    const pages = this.ringPages();
    const session = await this.manager.startRecording({ events, target: chosen.target, label: `logpoint: ${spec}`, ...(pages ? { pages } : {}) });
    this.armed.push({ spec, sessionId: session.id, file: uri.fsPath, line: events[0].location?.line ?? line });
    this.log(`${spec}: logging the values in scope at each hit (session ${session.id}); capture a snapshot to see them at the line`);
    this.decorate();
  }

  /** The logpoints armed here: the line, and the tally of the last snapshot once there is one. */
  list(): readonly Readonly<ArmedLogpoint>[] {
    return this.armed;
  }

  private update(sessionId: string): void {
    const mine = this.armed.filter((armed) => armed.sessionId === sessionId);
    const snapshot = this.manager.get(sessionId).snapshots.slice(-1)[0];
    if (!snapshot || mine.length === 0) return;
    for (const armed of mine) armed.tally = tallyLogpoints(snapshot.decoded, (name) => name === armed.spec)[0];
    this.decorate();
  }

  private forget(sessionId: string): void {
    for (let i = this.armed.length - 1; i >= 0; i--) if (this.armed[i].sessionId === sessionId) this.armed.splice(i, 1);
    this.decorate();
  }

  private decorate(): void {
    for (const editor of vscode.window.visibleTextEditors) {
      const lines = this.armed.filter((armed) => armed.file === editor.document.uri.fsPath);
      editor.setDecorations(
        this.values,
        lines.map((armed) => ({
          range: new vscode.Range(armed.line - 1, Number.MAX_SAFE_INTEGER, armed.line - 1, Number.MAX_SAFE_INTEGER),
          renderOptions: { after: { contentText: armed.tally ? logpointInlineText(armed.tally) : 'log: values at each hit — capture a snapshot to see them' } },
        })),
      );
    }
  }

  provideHover(document: vscode.TextDocument, position: vscode.Position): vscode.Hover | undefined {
    const armed = this.armed.find((a) => a.file === document.uri.fsPath && a.line === position.line + 1 && a.tally);
    if (!armed?.tally) return undefined;
    const markdown = new vscode.MarkdownString(`**Ringside** ${armed.spec}: ${armed.tally.hits} hits in the last snapshot\n\n`);
    markdown.isTrusted = false;
    for (const [name, variable] of armed.tally.variables) markdown.appendText(`${describeVariable(name, variable)}\n`);
    if (armed.tally.error) markdown.appendText(`no values: ${armed.tally.error}\n`);
    for (const line of notCapturedLines(armed.tally)) markdown.appendText(`${line}\n`);
    return new vscode.Hover(markdown);
  }

  dispose(): void {
    for (const disposable of this.disposables.splice(0)) disposable.dispose();
    this.values.dispose();
  }
}
