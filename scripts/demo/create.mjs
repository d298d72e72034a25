// Creates the Ringside demo workspace from scripts/demo/template: copies it, compiles demo.c with `gcc -g -O0 -pthread`
// and points `ringside.launch.program` at the binary by absolute path (so it does not depend on variable expansion).
//   node scripts/demo/create.mjs TARGET_FOLDER
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync, existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeFailure, ScriptError } from '../script-error.mjs';

const templateDir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'template');

export class DemoWorkspaceError extends ScriptError {
  constructor(message) {
    super(message);
    this.name = 'DemoWorkspaceError';
  }
}

/**
 * User settings for the fresh VS Code profile the demo opens in (`npm start` writes them when it creates the profile;
 * the e2e smoke test uses them too). VS Code opens a newly installed extension's walkthrough by itself, in the active
 * editor group, over demo.c; Ringside opens it beside demo.c instead (extension/ui/first-screen.ts). The setting is
 * machine-scoped: VS Code ignores it in a workspace's settings, so it lives here.
 */
export const demoUserSettings = Object.freeze({ 'workbench.welcomePage.walkthroughs.openOnInstall': false });

/** Rounds × increments: what a `demo ROUNDS` run adds to demo_counter (must match INCREMENTS_PER_ROUND in demo.c). */
export function demoIncrements(rounds) {
  const source = readFileSync(path.join(templateDir, 'demo.c'), 'utf8');
  const match = /#define INCREMENTS_PER_ROUND (\d+)/.exec(source);
  if (!match) throw new DemoWorkspaceError('demo.c lost its INCREMENTS_PER_ROUND');
  return rounds * Number(match[1]);
}

/**
 * @param {string} target folder to create (may exist; template files are overwritten, the binary rebuilt if stale)
 * @param {{ launchArgs?: string[], firstScreen?: boolean }} [options] launchArgs: extra `ringside.launch.args` for the demo
 *   (e.g. a round count); firstScreen (default true): keep .vscode/ringside-first-screen.json, so the extension opens
 *   demo.c, its view and its walkthrough on the first open (e2e scenarios that start elsewhere leave it out)
 * @returns {{ folder: string, program: string, source: string, counterLine: number }}
 *   counterLine: 1-based line of `demo_counter++` (the "Record Hits on This Line" target)
 */
export function createDemoWorkspace(target, { launchArgs, firstScreen = true } = {}) {
  const folder = path.resolve(target);
  mkdirSync(folder, { recursive: true });
  cpSync(templateDir, folder, { recursive: true });
  if (!firstScreen) rmSync(path.join(folder, '.vscode', 'ringside-first-screen.json'));
  const source = path.join(folder, 'demo.c');
  const program = path.join(folder, 'demo');
  if (!existsSync(program) || statSync(program).mtimeMs < statSync(source).mtimeMs) {
    try {
      execFileSync('gcc', ['-g', '-O0', '-pthread', '-o', program, source], { stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (error) {
      throw new DemoWorkspaceError(`gcc could not build the demo: ${error.stderr?.toString() ?? error.message}`);
    }
  }
  const settingsFile = path.join(folder, '.vscode', 'settings.json');
  let settings = readFileSync(settingsFile, 'utf8').replace('${workspaceFolder}/demo', program);
  if (launchArgs) settings = settings.replace(/\n}\s*$/, `,\n  "ringside.launch.args": ${JSON.stringify(launchArgs)}\n}\n`);
  writeFileSync(settingsFile, settings);
  const lines = readFileSync(source, 'utf8').split('\n');
  const counterLine = lines.findIndex((line) => line.includes('ringside-demo: counter-increment')) + 1;
  if (counterLine === 0) throw new DemoWorkspaceError('demo.c lost its counter-increment marker');
  return { folder, program, source, counterLine };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (!process.argv[2]) {
    console.error('usage: node scripts/demo/create.mjs TARGET_FOLDER');
    process.exit(2);
  }
  try {
    console.log(createDemoWorkspace(process.argv[2]).folder);
  } catch (error) {
    console.error(describeFailure(error));
    process.exit(1);
  }
}
