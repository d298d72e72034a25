// Time formatting for the axis, tooltips, details and the brush summary. Times are ns as doubles relative
// to the store's origin (exact below 2^53 ns ≈ 104 days); absolute times stay bigint. Everything the page
// shows goes through one TimeBase: time since the start of the shown capture, or the perf clock on demand.

const UNITS: readonly { readonly ns: number; readonly suffix: string }[] = [
  { ns: 1e9, suffix: 's' },
  { ns: 1e6, suffix: 'ms' },
  { ns: 1e3, suffix: 'µs' },
  { ns: 1, suffix: 'ns' },
];

/** Human duration with 4 significant digits: 1234567 → "1.235 ms", 0 → "0 ns". */
export function formatDuration(ns: number): string {
  if (!Number.isFinite(ns)) return '—';
  const abs = Math.abs(ns);
  if (abs === 0) return '0 ns';
  const unit = UNITS.find((u) => abs >= u.ns) ?? UNITS[UNITS.length - 1];
  const value = ns / unit.ns;
  const digits = unit.ns === 1 ? 0 : Math.max(0, 3 - Math.floor(Math.log10(Math.abs(value))));
  return `${value.toFixed(digits)} ${unit.suffix}`;
}

/**
 * Axis tick formatter for a visible span: picks one unit for all ticks and just enough decimals
 * to tell neighbouring ticks apart (`step` = distance between ticks).
 */
export function axisTickFormatter(step: number): (ns: number) => string {
  const s = Math.abs(step) || 1;
  const unit = UNITS.find((u) => s * 100 >= u.ns) ?? UNITS[UNITS.length - 1];
  const decimals = Math.max(0, Math.min(9, Math.ceil(-Math.log10(s / unit.ns) - 1e-9)));
  return (ns: number) => `${(ns / unit.ns).toFixed(decimals)} ${unit.suffix}`;
}

/** A time since the capture's start in one unit to the nanosecond: 505000 → "505.000 µs", 1.5e9 → "1.500000000 s". */
export function formatOffset(ns: number): string {
  if (!Number.isFinite(ns)) return '—';
  const abs = Math.abs(Math.round(ns));
  const unit = UNITS.find((u) => abs >= u.ns) ?? UNITS[UNITS.length - 1];
  return `${(Math.round(ns) / unit.ns).toFixed(Math.round(Math.log10(unit.ns)))} ${unit.suffix}`;
}

/**
 * How the page shows a time: relative to `startNs` (the shown capture's first timed record, store-relative ns), or,
 * with `perfClock`, as the perf clock (what perf script prints: seconds.nanoseconds). `rawNs` is the exact integer.
 */
export class TimeBase {
  constructor(
    readonly startNs: number,
    readonly originNs: bigint,
    readonly perfClock: boolean,
  ) {}

  /** A record's time in the chosen base. */
  format(t: number): string {
    if (!Number.isFinite(t)) return 'no time';
    return this.perfClock ? `${formatAbsolute(this.originNs, t)} s` : formatOffset(t - this.startNs);
  }

  /** The perf clock's exact integer ns of a store time. */
  rawNs(t: number): string {
    return Number.isFinite(t) ? (this.originNs + BigInt(Math.round(t))).toString() : '—';
  }

  /** What the axis shows for store time t is t + shift (ns): time since the start, or the perf clock. */
  shift(): number {
    return this.perfClock ? Number(this.originNs) : -this.startNs;
  }

  /** Axis labels of shown values (t + shift) for ticks `step` ns apart: one unit, or perf-clock seconds with just enough decimals. */
  tickFormatter(step: number): (shown: number) => string {
    if (!this.perfClock) return axisTickFormatter(step);
    const decimals = Math.max(0, Math.min(9, Math.ceil(-Math.log10((Math.abs(step) || 1) / 1e9) - 1e-9)));
    return (shown) => `${(shown / 1e9).toFixed(decimals)} s`;
  }
}

/** Absolute perf-style timestamp "seconds.nanoseconds" from a bigint origin plus a relative double. */
export function formatAbsolute(originNs: bigint, relativeNs: number): string {
  if (!Number.isFinite(relativeNs)) return '—';
  const abs = originNs + BigInt(Math.round(relativeNs));
  const negative = abs < 0n;
  const v = negative ? -abs : abs;
  const seconds = v / 1_000_000_000n;
  const nanos = (v % 1_000_000_000n).toString().padStart(9, '0');
  return `${negative ? '-' : ''}${seconds}.${nanos}`;
}

/** Hex address from two u32 halves, as perf prints it (no leading zeros). */
export function formatAddress(hi: number, lo: number): string {
  return '0x' + ((BigInt(hi >>> 0) << 32n) | BigInt(lo >>> 0)).toString(16);
}
