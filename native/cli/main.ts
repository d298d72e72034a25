// `ringside`: the command-line front end on the same core the extension uses.
// Contract: JSON Lines on stdout or -o, a human summary on stderr, the exit status runCapture reports
// (see USAGE), and exit 1 with one `ringside: <message>` line on any user or system error, never a stack trace.

import { COMMAND_USAGE, parseArgs, USAGE, UsageError } from './args';
import { describeError } from './errors';
import { disableSymbolCache, onSymbolCacheProblem } from '../symbols/symbol-cache';
import { pinMmapThreshold } from '../sys/libc';
import { keepHeapSmall } from './heap';

/**
 * Large buffers unmapped when freed (libc.ts pinMmapThreshold): glibc's rising threshold otherwise put decode's
 * buffers of a few MB on the brk heap after the first large one was freed, where they stayed resident as holes.
 */
const MMAP_THRESHOLD_BYTES = 128 * 1024;

async function run(argv: readonly string[]): Promise<number> {
  pinMmapThreshold(MMAP_THRESHOLD_BYTES);
  const options = parseArgs(argv);
  if (options.symbolCache === false) disableSymbolCache();
  // A cache directory refused (a link, someone else's): said once, and the run goes on without the cache.
  onSymbolCacheProblem((message) => process.stderr.write(`ringside: ${message}\n`));
  if (!('format' in options) || options.format !== 'html') keepHeapSmall();
  switch (options.command) {
    case 'help':
      process.stdout.write((options.topic ? COMMAND_USAGE[options.topic] : USAGE) + '\n');
      return 0;
    case 'events':
      return (await import('./events')).runEvents(options);
    case 'decode':
      return (await import('./decode')).runDecode(options);
    case 'capture':
      return (await import('./capture')).runCapture(options);
    case 'keep':
      return (await import('./keep')).runKeep(options);
    case 'snapshot':
      return (await import('./keep')).runSnapshot(options);
    case 'list':
      return (await import('./keep')).runList(options);
  }
}

/** `capture ` when the failed command line was a capture: its own usage is the one to read. */
function helpTopicOf(word: string | undefined): string {
  return word !== undefined && word in COMMAND_USAGE ? `${word} ` : '';
}

run(process.argv.slice(2)).then(
  // Exit explicitly: a launched command that outlives us (keep stopped by SIGTERM) must not keep
  // this process alive through its child handle. stdout/stderr are synchronous for files and pipes.
  (code) => process.exit(code),
  (error: unknown) => {
    // The reader of stdout is gone (`ringside capture --follow ... | head`): end quietly, as a filter killed by SIGPIPE does
    // (the capture has ended what it launched by now).
    if ((error as NodeJS.ErrnoException | undefined)?.code === 'EPIPE') {
      process.exitCode = 128 + 13;
      return;
    }
    process.stderr.write(`ringside: ${describeError(error)}\n`);
    if (error instanceof UsageError) process.stderr.write(`(see ringside ${helpTopicOf(process.argv[2])}--help)\n`);
    if (process.env.RINGSIDE_DEBUG && error instanceof Error) process.stderr.write(`${error.stack}\n`);
    process.exitCode = 1;
  },
);
