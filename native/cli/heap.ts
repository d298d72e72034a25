// The CLI's V8 heap and compiler settings, set at run time: main.ts and decode.ts set them at start, and again
// whoever starts a worker thread (starting one resets them, see symbols/prefetch.ts).

import { setFlagsFromString } from 'node:v8';

/**
 * How far past what a full GC found alive the old space may grow before the next one: V8's own factor (up to 4x for a
 * small heap) let `decode`'s old space reach 34 MB holding 13 MB alive at its end, the rest garbage promoted out of
 * the small new space below. 20 %: peak RSS 154 -> 137 MiB on a 10.3 MiB perf record -a -g file, for twice the mark
 * and compacts (8 -> 17, each a few ms at this heap size). 50 % kept 139-142 MiB for as many, 100 % 145 MiB for 12.
 */
const OLD_SPACE_GROWING_PERCENT = 20;

/**
 * A streamed output's garbage dies young (per-record strings, each output chunk): new space grown to V8's default
 * 16 MiB semi-spaces held a sixth of `decode`'s peak RSS (169 → 145 MiB kept at its start size, on perf's -a -g file),
 * for 2-6 % more CPU in interleaved pairs (more scavenges). Not for the HTML page, which holds its whole page anyway:
 * there it cost 9 % more CPU for 7 % of the RSS. Set at run time only the growth factor takes effect (the maximum is
 * read at heap setup); the old space's growing factor does too.
 */
export function keepHeapSmall(): void {
  setFlagsFromString('--max-semi-space-size=2');
  setFlagsFromString('--semi-space-growth-factor=1');
  setFlagsFromString(`--heap-growing-percent=${OLD_SPACE_GROWING_PERCENT}`);
}

/**
 * How much bytecode TurboFan inlines into one optimized function, in all: half V8's default (920). A `decode` spends
 * about a third of its CPU on V8's background threads, most of it compiling (its hot functions are compiled again
 * after each deoptimization); at half the budget those threads took 0.15-0.2 s less of a 2.0-2.3 s decode of a 16 MiB
 * perf record -a -g file and its main thread no longer (interleaved runs); a quarter (230) slowed the main thread.
 */
const INLINED_BYTECODE_CUMULATIVE = 460;

/** Less inlining, for compiles that cost less CPU (see INLINED_BYTECODE_CUMULATIVE); set before the hot code is compiled. */
export function inlineLess(): void {
  setFlagsFromString(`--max-inlined-bytecode-size-cumulative=${INLINED_BYTECODE_CUMULATIVE}`);
}
