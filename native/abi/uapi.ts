// Constants of the Linux perf_event uapi (include/uapi/linux/perf_event.h, hw_breakpoint.h),
// written out by hand because koffi cannot read C headers and the decoder must stay pure.
// Values are ABI: they never change once released.

export const PerfType = {
  HARDWARE: 0,
  SOFTWARE: 1,
  TRACEPOINT: 2,
  HW_CACHE: 3,
  RAW: 4,
  BREAKPOINT: 5,
} as const;

export const SoftwareConfig = {
  CPU_CLOCK: 0,
  TASK_CLOCK: 1,
  PAGE_FAULTS: 2,
  CONTEXT_SWITCHES: 3,
  CPU_MIGRATIONS: 4,
  PAGE_FAULTS_MIN: 5,
  PAGE_FAULTS_MAJ: 6,
  ALIGNMENT_FAULTS: 7,
  EMULATION_FAULTS: 8,
  DUMMY: 9,
  BPF_OUTPUT: 10,
  CGROUP_SWITCHES: 11,
} as const;

/** sample_type bits. All fit in 32 bits today, so plain numbers are used on the hot path. */
export const Sample = {
  IP: 1 << 0,
  TID: 1 << 1,
  TIME: 1 << 2,
  ADDR: 1 << 3,
  READ: 1 << 4,
  CALLCHAIN: 1 << 5,
  ID: 1 << 6,
  CPU: 1 << 7,
  PERIOD: 1 << 8,
  STREAM_ID: 1 << 9,
  RAW: 1 << 10,
  BRANCH_STACK: 1 << 11,
  REGS_USER: 1 << 12,
  STACK_USER: 1 << 13,
  WEIGHT: 1 << 14,
  DATA_SRC: 1 << 15,
  IDENTIFIER: 1 << 16,
  TRANSACTION: 1 << 17,
  REGS_INTR: 1 << 18,
  PHYS_ADDR: 1 << 19,
  AUX: 1 << 20,
  CGROUP: 1 << 21,
  DATA_PAGE_SIZE: 1 << 22,
  CODE_PAGE_SIZE: 1 << 23,
  WEIGHT_STRUCT: 1 << 24,
} as const;

export const ReadFormat = {
  TOTAL_TIME_ENABLED: 1 << 0,
  TOTAL_TIME_RUNNING: 1 << 1,
  ID: 1 << 2,
  GROUP: 1 << 3,
  LOST: 1 << 4,
} as const;

/** PERF_RECORD_* header types. */
export const RecordType = {
  MMAP: 1,
  LOST: 2,
  COMM: 3,
  EXIT: 4,
  THROTTLE: 5,
  UNTHROTTLE: 6,
  FORK: 7,
  READ: 8,
  SAMPLE: 9,
  MMAP2: 10,
  AUX: 11,
  ITRACE_START: 12,
  LOST_SAMPLES: 13,
  SWITCH: 14,
  SWITCH_CPU_WIDE: 15,
  NAMESPACES: 16,
  KSYMBOL: 17,
  BPF_EVENT: 18,
  CGROUP: 19,
  TEXT_POKE: 20,
  AUX_OUTPUT_HW_ID: 21,
  CALLCHAIN_DEFERRED: 22,
} as const;

export const RECORD_TYPE_NAMES: Readonly<Record<number, string>> = Object.fromEntries(Object.entries(RecordType).map(([name, value]) => [value, name]));

/** The PERF_RECORD_* name of a record type without the prefix (`SAMPLE`), or `TYPE_n` for one this list does not name. */
export function recordTypeName(type: number): string {
  return RECORD_TYPE_NAMES[type] ?? `TYPE_${type}`;
}

/** perf_event_header.misc bits. */
export const Misc = {
  CPUMODE_MASK: 0x7,
  CPUMODE_UNKNOWN: 0,
  KERNEL: 1,
  USER: 2,
  HYPERVISOR: 3,
  GUEST_KERNEL: 4,
  GUEST_USER: 5,
  /** MMAP/MMAP2: data mapping; COMM: exec; SWITCH: switch out. Same bit, meaning by record type. */
  MMAP_DATA: 1 << 13,
  COMM_EXEC: 1 << 13,
  SWITCH_OUT: 1 << 13,
  /** MMAP2 carries a build id instead of maj/min/ino. */
  MMAP_BUILD_ID: 1 << 14,
  EXACT_IP: 1 << 14,
  SWITCH_OUT_PREEMPT: 1 << 14,
  EXT_RESERVED: 1 << 15,
} as const;

/** Callchain context markers (PERF_CONTEXT_*), as the top 32 bits are all ones: compare the low word. */
export const CallchainContext = {
  HV: 0xffffffe0,
  KERNEL: 0xffffff80,
  USER: 0xfffffe00,
  GUEST: 0xfffff800,
  GUEST_KERNEL: 0xfffff780,
  GUEST_USER: 0xfffff600,
  /** PERF_CONTEXT_MAX = (u64)-4095: any value at or above it is a marker. */
  MAX_LOW: 0xfffff001,
} as const;

export const BreakpointType = {
  EMPTY: 0,
  R: 1,
  W: 2,
  RW: 3,
  X: 4,
  INVALID: 7,
} as const;

/** ioctl request numbers (x86_64/aarch64 share the generic _IO encoding). */
export const Ioctl = {
  ENABLE: 0x2400,
  DISABLE: 0x2401,
  REFRESH: 0x2402,
  RESET: 0x2403,
  PERIOD: 0x40082404,
  SET_OUTPUT: 0x2405,
  SET_FILTER: 0x40082406,
  ID: 0x80082407,
  SET_BPF: 0x40042408,
  PAUSE_OUTPUT: 0x40042409,
  QUERY_BPF: 0xc008240a,
  MODIFY_ATTRIBUTES: 0x4008240b,
} as const;

export const PerfFlag = {
  FD_NO_GROUP: 1 << 0,
  FD_OUTPUT: 1 << 1,
  PID_CGROUP: 1 << 2,
  FD_CLOEXEC: 1 << 3,
} as const;

/** Size of struct perf_event_mmap_page header page fields we read (offsets in bytes). */
export const MmapPage = {
  DATA_HEAD: 1024,
  DATA_TAIL: 1032,
  DATA_OFFSET: 1040,
  DATA_SIZE: 1048,
  AUX_HEAD: 1056,
  AUX_TAIL: 1064,
  AUX_OFFSET: 1072,
  AUX_SIZE: 1080,
} as const;

export const PERF_RECORD_HEADER_SIZE = 8;

/**
 * The x86-64 red zone as a logpoint's tracefs uprobe fetches it (native/perf/tracefs-uprobes.ts): the 128
 * bytes below the stack pointer, as 16 u64 fetch arguments right after the uprobe event's trace entry
 * header (8 bytes) and __probe_ip (8), in the sample's PERF_SAMPLE_RAW data.
 */
export const RED_ZONE_BYTES = 128;
export const RED_ZONE_RAW_OFFSET = 16;
