// The names of the objects code runs in that are not files, as /proc/PID/maps, the side-band's MMAP2 records and perf
// name them: one home for the symbolizer (native), the host and the page (shared/stacks.ts re-exports these). Pure.

/** The vDSO's name in /proc/PID/maps and in MMAP2 records. */
export const VDSO_NAME = '[vdso]';

/** What perf calls the kernel's object (its dso column, `perf script`'s `(dso)`): the library kernel frames are in. */
export const KERNEL_LIBRARY = '[kernel.kallsyms]';
