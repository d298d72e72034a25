// struct perf_event_attr, encoded by hand with a DataView: koffi has no bitfields, and the decoder
// (which must stay free of native imports) needs the same description of an event.
// Layout: include/uapi/linux/perf_event.h, PERF_ATTR_SIZE_VER8 (136 bytes).

export const PERF_ATTR_SIZE_VER0 = 64;
export const PERF_ATTR_SIZE_LATEST = 136;

/** Every single-bit flag of the u64 bitfield at offset 40, in bit order. precise_ip (bits 15-16) is separate. */
export const ATTR_FLAG_BITS = {
  disabled: 0,
  inherit: 1,
  pinned: 2,
  exclusive: 3,
  excludeUser: 4,
  excludeKernel: 5,
  excludeHv: 6,
  excludeIdle: 7,
  mmap: 8,
  comm: 9,
  freq: 10,
  inheritStat: 11,
  enableOnExec: 12,
  task: 13,
  watermark: 14,
  // 15-16: precise_ip
  mmapData: 17,
  sampleIdAll: 18,
  excludeHost: 19,
  excludeGuest: 20,
  excludeCallchainKernel: 21,
  excludeCallchainUser: 22,
  mmap2: 23,
  commExec: 24,
  useClockid: 25,
  contextSwitch: 26,
  writeBackward: 27,
  namespaces: 28,
  ksymbol: 29,
  bpfEvent: 30,
  auxOutput: 31,
  cgroup: 32,
  textPoke: 33,
  buildId: 34,
  inheritThread: 35,
  removeOnExec: 36,
  sigtrap: 37,
} as const;

export type AttrFlagName = keyof typeof ATTR_FLAG_BITS;
export type AttrFlags = Partial<Record<AttrFlagName, boolean>>;

/** aux_action bits (aux_pause/aux_resume/aux_start_paused, Linux 6.13): only meaningful in a group led by an AUX event. */
export const AUX_ACTION_BITS = { auxStartPaused: 0, auxPause: 1, auxResume: 2 } as const;
export type AuxActionName = keyof typeof AUX_ACTION_BITS;

/**
 * A perf_event_attr as plain data. u64 fields that can exceed 2^53 (config, addresses, register
 * masks) are bigint; fields that are small by nature are numbers.
 */
export interface PerfEventAttr {
  type: number;
  /** Written by encodeAttr; on E2BIG the kernel writes back the size it wants. */
  size?: number;
  config: bigint;
  /** sample_period, or sample_freq when flags.freq is set. */
  samplePeriod: bigint;
  sampleType: number;
  readFormat: number;
  flags: AttrFlags;
  preciseIp?: number;
  /** wakeup_events, or wakeup_watermark when flags.watermark is set. */
  wakeupEvents?: number;
  bpType?: number;
  /** bp_addr / kprobe_func / uprobe_path / config1. */
  config1?: bigint;
  /** bp_len / kprobe_addr / probe_offset / config2. */
  config2?: bigint;
  branchSampleType?: bigint;
  sampleRegsUser?: bigint;
  sampleStackUser?: number;
  clockid?: number;
  sampleRegsIntr?: bigint;
  auxWatermark?: number;
  sampleMaxStack?: number;
  auxSampleSize?: number;
  auxAction?: Partial<Record<AuxActionName, boolean>>;
  sigData?: bigint;
  config3?: bigint;
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Encodes attr into a fresh buffer of `size` bytes (kernel's native byte order). */
export function encodeAttr(attr: PerfEventAttr, size: number = PERF_ATTR_SIZE_LATEST): Uint8Array {
  const bytes = new Uint8Array(Math.max(size, PERF_ATTR_SIZE_LATEST));
  const view = new DataView(bytes.buffer);
  const le = LITTLE_ENDIAN;
  const u64 = (offset: number, value: bigint | number | undefined) => view.setBigUint64(offset, BigInt.asUintN(64, BigInt(value ?? 0)), le);
  view.setUint32(0, attr.type >>> 0, le);
  view.setUint32(4, size, le);
  u64(8, attr.config);
  u64(16, attr.samplePeriod);
  u64(24, attr.sampleType);
  u64(32, attr.readFormat);
  let flags = 0n;
  for (const [name, bit] of Object.entries(ATTR_FLAG_BITS)) {
    if (attr.flags[name as AttrFlagName]) flags |= 1n << BigInt(bit);
  }
  const precise = attr.preciseIp ?? 0;
  if (precise < 0 || precise > 3) throw new RangeError(`precise_ip must be 0..3, got ${precise}`);
  flags |= BigInt(precise) << 15n;
  u64(40, flags);
  view.setUint32(48, attr.wakeupEvents ?? 0, le);
  view.setUint32(52, attr.bpType ?? 0, le);
  u64(56, attr.config1);
  u64(64, attr.config2);
  u64(72, attr.branchSampleType);
  u64(80, attr.sampleRegsUser);
  view.setUint32(88, attr.sampleStackUser ?? 0, le);
  view.setInt32(92, attr.clockid ?? 0, le);
  u64(96, attr.sampleRegsIntr);
  view.setUint32(104, attr.auxWatermark ?? 0, le);
  view.setUint16(108, attr.sampleMaxStack ?? 0, le);
  view.setUint32(112, attr.auxSampleSize ?? 0, le);
  let auxAction = 0;
  for (const [name, bit] of Object.entries(AUX_ACTION_BITS)) {
    if (attr.auxAction?.[name as AuxActionName]) auxAction |= 1 << bit;
  }
  view.setUint32(116, auxAction >>> 0, le);
  u64(120, attr.sigData);
  u64(128, attr.config3);
  return size >= bytes.length ? bytes : bytes.subarray(0, size);
}

/** Decodes an attr (e.g. from a perf.data file or a keeper's state); tolerates older, shorter sizes. */
export function decodeAttr(bytes: Uint8Array, littleEndian: boolean = LITTLE_ENDIAN): PerfEventAttr {
  if (bytes.length < PERF_ATTR_SIZE_VER0) throw new RangeError(`perf_event_attr needs at least ${PERF_ATTR_SIZE_VER0} bytes, got ${bytes.length}`);
  const padded = new Uint8Array(Math.max(bytes.length, PERF_ATTR_SIZE_LATEST));
  padded.set(bytes);
  const view = new DataView(padded.buffer);
  const le = littleEndian;
  const u64 = (offset: number) => view.getBigUint64(offset, le);
  const flagWord = u64(40);
  const flags: AttrFlags = {};
  for (const [name, bit] of Object.entries(ATTR_FLAG_BITS)) {
    if ((flagWord >> BigInt(bit)) & 1n) flags[name as AttrFlagName] = true;
  }
  const auxBits = view.getUint32(116, le);
  const auxAction: Partial<Record<AuxActionName, boolean>> = {};
  for (const [name, bit] of Object.entries(AUX_ACTION_BITS)) {
    if ((auxBits >>> bit) & 1) auxAction[name as AuxActionName] = true;
  }
  return {
    type: view.getUint32(0, le),
    size: view.getUint32(4, le),
    config: u64(8),
    samplePeriod: u64(16),
    sampleType: Number(u64(24)),
    readFormat: Number(u64(32)),
    flags,
    preciseIp: Number((flagWord >> 15n) & 3n),
    wakeupEvents: view.getUint32(48, le),
    bpType: view.getUint32(52, le),
    config1: u64(56),
    config2: u64(64),
    branchSampleType: u64(72),
    sampleRegsUser: u64(80),
    sampleStackUser: view.getUint32(88, le),
    clockid: view.getInt32(92, le),
    sampleRegsIntr: u64(96),
    auxWatermark: view.getUint32(104, le),
    sampleMaxStack: view.getUint16(108, le),
    auxSampleSize: view.getUint32(112, le),
    auxAction,
    sigData: u64(120),
    config3: u64(128),
  };
}
