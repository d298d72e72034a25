// How a process's address space changes when something is mapped: the new mapping replaces whatever
// part of older ones it overlaps (mmap(2): "any existing mapping in that range is discarded"), which
// is also how perf's machine model applies MMAP/MMAP2 records (maps__fixup_overlappings). The
// symbolizer and the side-band pruner both replay mappings this way. Pure.

/**
 * Maps [start, end) of `list` (sorted by start, disjoint) to `added`, or to nothing when null, in
 * place: what overlaps it is cut to the parts outside (`cut(m, from, to)` is m's part [from, to)),
 * as perf's maps__fixup_overlappings does. Only the overlapped run is touched.
 */
export function mapRange<T extends { readonly start: bigint; readonly end: bigint }>(
  list: T[],
  start: bigint,
  end: bigint,
  added: T | null,
  cut: (m: T, from: bigint, to: bigint) => T,
): void {
  let first = 0;
  let past = list.length;
  while (first < past) {
    const mid = (first + past) >>> 1;
    if (list[mid].end <= start) first = mid + 1;
    else past = mid;
  }
  // list[first, last) overlap [start, end).
  let last = first;
  const replacement: T[] = [];
  while (last < list.length && list[last].start < end) {
    const m = list[last];
    if (m.start < start) replacement.push(cut(m, m.start, start));
    last++;
  }
  if (added) replacement.push(added);
  const tail = last > first ? list[last - 1] : undefined;
  if (tail && tail.end > end) replacement.push(cut(tail, end, tail.end));
  list.splice(first, last - first, ...replacement);
}
