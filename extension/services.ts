// The services every part of the extension shares, created once at activation: the output channel and its
// log, the session manager and backend, the keeper client, the hardware breakpoints and the timeline panel's
// host. Also the settings as the rest of the code wants them, and the one way to register a command.

import path from 'node:path';
import * as vscode from 'vscode';
import { createBackend } from './session/backend';
import { SessionManager } from './session/session-manager';
import { KeeperClient } from './session/keeper-client';
import type { Backend } from './session/ports';
import { TimelinePanel, type TimelineHost } from './panel/timeline-panel';
import { describeError } from './ui/errors';
import { pickTarget } from './ui/pickers';
import { HardwareBreakpoints } from './editor/editor-integration';
import { Logpoints } from './editor/logpoints';
import { powerOfTwoAtLeast } from '../native/abi/units';

export interface Settings {
  readonly defaultEvents: string[];
  /** Ring pages the user chose (a power of two), or undefined to let the recorder fit its default. */
  readonly pages: number | undefined;
  readonly period: number | undefined;
  readonly freq: number | undefined;
  readonly callchains: boolean;
  readonly retention: number;
  readonly keeper: boolean;
  readonly bigSnapshotBytes: number;
  readonly warmCopyBuffers: boolean;
  /** Seconds of history to keep: rings whose coverage falls below it grow (ringside.window). */
  readonly windowSec: number | undefined;
}

export function settings(): Settings {
  const config = vscode.workspace.getConfiguration('ringside');
  // Only a size the user chose is passed on: otherwise the recorder fits its default to this user's
  // locked-memory budget instead of refusing it.
  const inspected = config.inspect<number>('bufferPages');
  const chosen = inspected?.workspaceFolderValue ?? inspected?.workspaceValue ?? inspected?.globalValue;
  return {
    defaultEvents: config.get<string[]>('defaultEvents') ?? ['task-clock'],
    pages: chosen === undefined ? undefined : powerOfTwoAtLeast(chosen),
    period: config.get<number | null>('samplePeriod') ?? undefined,
    freq: config.get<number | null>('sampleFrequency') ?? undefined,
    callchains: config.get<boolean>('callchains') ?? false,
    retention: config.get<number>('snapshotRetention') ?? 10,
    keeper: config.get<boolean>('keeper.enabled') ?? false,
    bigSnapshotBytes: config.get<number>('bigSnapshotBytes') ?? 4 << 20,
    warmCopyBuffers: config.get<boolean>('warmCopyBuffers') ?? true,
    windowSec: config.get<number | null>('window') ?? undefined,
  };
}

/**
 * How events sample as the settings say (ringside.samplePeriod, sampleFrequency, callchains): one home for Start
 * Recording (events resolved here) and kept recordings (passed to `ringside keep` as -c, -F and -g).
 */
export function samplingSettings(s: Settings): { period?: bigint; freq?: number; callchain: boolean } {
  return { ...(s.period ? { period: BigInt(s.period) } : {}), ...(s.freq ? { freq: s.freq } : {}), callchain: s.callchains };
}

export interface Services {
  readonly context: vscode.ExtensionContext;
  readonly output: vscode.OutputChannel;
  log(line: string): void;
  readonly backend: Backend;
  readonly sessions: SessionManager;
  readonly keepers: KeeperClient;
  readonly breakpoints: HardwareBreakpoints;
  readonly logpoints: Logpoints;
  readonly timelineHost: TimelineHost;
  /** dist/cli.js of this installation, which keepers run. */
  readonly cliPath: string;
}

export function createServices(context: vscode.ExtensionContext): Services {
  const output = vscode.window.createOutputChannel('Ringside');
  const log = (line: string) => output.appendLine(`[${new Date().toISOString()}] ${line}`);
  const backend = createBackend(() => {
    const s = settings();
    return {
      ...samplingSettings(s),
      warmCopyBuffers: s.warmCopyBuffers,
      ...(s.windowSec ? { windowSec: s.windowSec } : {}),
    };
  });
  const sessions = new SessionManager({ backend, retention: settings().retention });
  const keepers = new KeeperClient();
  const cliPath = path.join(context.extensionPath, 'dist', 'cli.js');
  const breakpoints = new HardwareBreakpoints(
    sessions,
    pickTarget,
    log,
    () => TimelinePanel.instance?.postWatches(),
    () => settings().pages,
  );
  const timelineHost: TimelineHost = { extensionUri: context.extensionUri, manager: sessions, log, watches: breakpoints.watchHandler };
  const logpoints = new Logpoints(sessions, pickTarget, log, () => settings().pages);
  return { context, output, log, backend, sessions, keepers, breakpoints, logpoints, timelineHost, cliPath };
}

/**
 * Registers a command whose failures become a notification (with Copy Command when there is a fix) and full
 * detail in the output channel.
 */
export function registerCommand(services: Services, name: string, body: (...args: never[]) => Promise<unknown> | unknown): vscode.Disposable {
  const { output, log } = services;
  return vscode.commands.registerCommand(name, async (...args: never[]) => {
    try {
      await body(...args);
    } catch (error) {
      const described = describeError(error, name.replace(/^ringside\./, ''));
      log(described.detail);
      const buttons = [...(described.command ? ['Copy Command'] : []), 'Show Output'];
      const choice = await vscode.window.showErrorMessage(`Ringside: ${described.message}`, ...buttons);
      if (choice === 'Copy Command' && described.command) await vscode.env.clipboard.writeText(described.command);
      if (choice === 'Show Output') output.show(true);
    }
  });
}
