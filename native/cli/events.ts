// `ringside events [--json]`: what this machine offers, from the same listing the extension's
// quick pick uses.
import type { EventsOptions } from './args';
import { listEvents, formatEventList } from '../specs/list';
import { toJson } from '../decode/jsonl';

export function runEvents(options: EventsOptions): number {
  const list = listEvents();
  process.stdout.write(options.json ? toJson(list) + '\n' : formatEventList(list));
  return 0;
}
