// `ringside keep`: events that outlive the editor. Opens the flight recorder like `capture`, then
// holds the rings and publishes what it holds (native/keeper) until SIGTERM/SIGINT; the extension
// re-attaches with pidfd_getfd and maps the SAME rings.

import type { CaptureOptions } from './args';
import { prepareEvents, recorderTarget } from './capture';
import { runKeeperUntilSignal } from '../keeper/keeper';

export async function runKeep(options: CaptureOptions): Promise<number> {
  const prepared = prepareEvents(options);
  return runKeeperUntilSignal({ events: prepared.events, target: recorderTarget(options, prepared), pages: options.pages });
}
