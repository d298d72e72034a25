// The CLI's V8 heap settings, set at run time: main.ts sets them at start, and again whoever starts a worker thread
// (starting one resets them, see symbols/prefetch.ts).

import { setFlagsFromString } from 'node:v8';

/**
 * A streamed output's garbage dies young (per-record strings, each output chunk): new space grown to V8's default
 * 16 MiB semi-spaces held a sixth of `decode`'s peak RSS (169 → 145 MiB kept at its start size, on perf's -a -g file),
 * for 2-6 % more CPU in interleaved pairs (more scavenges). Not for the HTML page, which holds its whole page anyway:
 * there it cost 9 % more CPU for 7 % of the RSS. Set at run time only the growth factor takes effect (the maximum is
 * read at heap setup).
 */
export function keepNewSpaceSmall(): void {
  setFlagsFromString('--max-semi-space-size=2');
  setFlagsFromString('--semi-space-growth-factor=1');
}
