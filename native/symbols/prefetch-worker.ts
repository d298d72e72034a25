// The worker thread of prefetch.ts: kallsyms first (the first kernel frame needs it, and it needs no list), then, once
// the other thread sends the objects the file names, each object's function index in the order given. Each piece is
// claimed in shared memory before it is built (what the other thread claimed is skipped) and sent back as the disk
// cache's columns, their buffers transferred. Reads and writes the disk cache as the other thread would.

import { receiveMessageOnPort, workerData } from 'node:worker_threads';
import { Kallsyms } from './kallsyms';
import { ObjectFile } from './object-file';
import { Claim, Control, type PrefetchObjects, type PrefetchReply, type PrefetchStart } from './prefetch';
import { disableSymbolCache } from './symbol-cache';

const start = workerData as PrefetchStart;
const control = new Int32Array(start.control);
Atomics.store(control, Control.Running, 1);
Atomics.notify(control, Control.Running);
if (!start.cacheEnabled) disableSymbolCache();

/** Each distinct buffer once: a transfer list may not name one twice. */
function buffersOf(views: readonly ArrayBufferView[]): ArrayBuffer[] {
  return [...new Set(views.map((view) => view.buffer as ArrayBuffer))];
}

/** Posts what `build` gives (or `failed` when it throws), then marks it posted. */
function post(build: () => PrefetchReply, failed: PrefetchReply, posted: Int32Array, postedAt: number): void {
  let reply: PrefetchReply;
  try {
    reply = build();
  } catch {
    // unreadable or not ELF here: the other thread reads it itself and says why where a frame needs it
    reply = failed;
  }
  const views: ArrayBufferView[] =
    'functions' in reply ? Object.values(reply.functions).filter((value): value is ArrayBufferView => ArrayBuffer.isView(value)) : [];
  if ('kallsyms' in reply && reply.kallsyms) views.push(reply.kallsyms.high, reply.kallsyms.low, reply.kallsyms.lineStart);
  start.port.postMessage(reply, buffersOf(views));
  Atomics.store(posted, postedAt, 1);
  Atomics.notify(posted, postedAt);
}

if (Atomics.compareExchange(control, Control.KallsymsClaim, Claim.Free, Claim.Worker) === Claim.Free) {
  post(() => ({ kallsyms: Kallsyms.read().compactColumns() }), { kallsyms: undefined }, control, Control.KallsymsPosted);
}
Atomics.wait(control, Control.Objects, 0);
const message = receiveMessageOnPort(start.port)?.message as PrefetchObjects | undefined;
if (message) {
  const claims = new Int32Array(message.shared, 0, message.objects.length);
  const posted = new Int32Array(message.shared, message.objects.length * 4, message.objects.length);
  message.objects.forEach((file, object) => {
    if (Atomics.compareExchange(claims, object, Claim.Free, Claim.Worker) !== Claim.Free) return;
    post(() => ({ object, ...new ObjectFile(file).functionColumns() }), { object }, posted, object);
  });
}
Atomics.store(control, Control.Finished, 1);
Atomics.notify(control, Control.Finished);
start.port.close();
