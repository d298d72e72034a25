// The names of objects that are not files, as /proc/PID/maps and fd links, the side-band's MMAP2 records and perf
// name them: one home for the native side, the host and the page (shared/stacks.ts re-exports KERNEL_LIBRARY). Pure.

/** The vDSO's name in /proc/PID/maps and in MMAP2 records. */
export const VDSO_NAME = '[vdso]';

/** What a perf event's fd links to in /proc/PID/fd, and its ring's path in /proc/PID/maps. */
export const PERF_EVENT_INODE = 'anon_inode:[perf_event]';

/** What perf calls the kernel's object (its dso column, `perf script`'s `(dso)`): the library kernel frames are in. */
export const KERNEL_LIBRARY = '[kernel.kallsyms]';

/** The kernel's mark of a mapped file that was unlinked since it was mapped (/proc/PID/maps and MMAP records). */
export const DELETED_SUFFIX = ' (deleted)';
