// How the scripts (`npm start`, `npm test`'s setup, code-server, packaging, the demo) fail: one line
// `ringside: <what went wrong and what to do>` on stderr and exit status 1. A failure the script expects (apt busy or
// failing, npm failing, a port in use, gcc missing...) is a ScriptError, and its message is all the user needs: no
// Node stack trace. Anything else is a bug in the script, and keeps its stack so it can be found.
// Only node built-ins: setup.mjs uses this before node_modules exists.

export class ScriptError extends Error {
  constructor(message) {
    super(message);
    this.name = 'ScriptError';
  }
}

/** The text to print for a failure: the message of an expected one, the stack of a bug. */
export function describeFailure(error) {
  if (error instanceof ScriptError) return `ringside: ${error.message}`;
  return `ringside: unexpected failure (a bug in the script; its stack follows):\n${error instanceof Error ? error.stack : String(error)}`;
}

/** Runs a script's main function; any failure is printed as `ringside: …` and ends the process with status 1. */
export function runMain(main) {
  Promise.resolve()
    .then(main)
    .catch((error) => {
      process.stderr.write(`\n${describeFailure(error)}\n`);
      process.exit(1);
    });
}
