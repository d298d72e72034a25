// Shapes of the /proc-synthesised side-band (procfs.ts produces them, the symbolizer consumes them).
// Pure types with no imports, so the browser-safe decoder and symbolizer can depend on them.

/** One line of /proc/PID/maps. Addresses are bigint: exact for any address. */
export interface ProcessMapping {
  readonly start: bigint;
  readonly end: bigint;
  /** `r-xp` etc. */
  readonly perms: string;
  /** File offset of `start` (the MMAP2 pgoff). */
  readonly pgoff: bigint;
  readonly inode: number;
  /** File path, `[vdso]`, `[heap]`..., or '' for anonymous memory. */
  readonly path: string;
  /** The file was unlinked after it was mapped (` (deleted)` in the maps): the file at `path` now is another one. */
  readonly deleted?: boolean;
}

/** The COMM + MMAP2 equivalent of one thread as /proc shows it at snapshot time. */
export interface ProcessSideband {
  readonly pid: number;
  readonly tid: number;
  readonly comm: string;
  /** Executable mappings (all mappings when asked), shared by the threads of one process. */
  readonly maps: readonly ProcessMapping[];
}
