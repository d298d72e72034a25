// Turns any failure into what a notification shows: one actionable sentence, an optional command
// the user can copy (the sysctl, the mount), and the full detail for the "Ringside" output channel.
// Pure: no vscode import, so it is unit tested.

import { PerfError } from '../../native/sys/errors';

export interface UserFacingError {
  readonly message: string;
  /** A shell command that fixes it, for a "Copy Command" button. */
  readonly command?: string;
  /** Everything, for the output channel. */
  readonly detail: string;
}

/** The first `backticked` shell command in a hint that looks like a fix. */
export function fixCommandOf(text: string): string | undefined {
  for (const match of text.matchAll(/`([^`]+)`/g)) {
    const command = match[1];
    if (/^(sudo |sysctl |mount |ulimit |setcap )/.test(command)) return command;
  }
  return undefined;
}

export function describeError(error: unknown, doing?: string): UserFacingError {
  const prefix = doing ? `${doing}: ` : '';
  if (error instanceof PerfError) {
    const command = fixCommandOf(error.hint);
    return {
      message: `${prefix}${error.code} from ${error.syscall}: ${error.hint}`,
      ...(command ? { command } : {}),
      detail: `${prefix}${error.stack ?? error.message}`,
    };
  }
  if (error instanceof Error) {
    const command = fixCommandOf(error.message);
    return { message: `${prefix}${error.message}`, ...(command ? { command } : {}), detail: `${prefix}${error.stack ?? error.message}` };
  }
  return { message: `${prefix}${String(error)}`, detail: `${prefix}${String(error)}` };
}
