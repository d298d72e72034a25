// Time formatting for the axis, tooltips and the brush summary. Times are ns as doubles relative
// to a snapshot origin (exact below 2^53 ns ≈ 104 days); absolute times stay bigint.

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

/** Formats a byte count: 1536 → "1.5 KiB". */
export function formatBytes(bytes: bigint | number): string {
  let v = Number(bytes);
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (Math.abs(v) >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return i === 0 ? `${v} B` : `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

/** Hex address from two u32 halves, as perf prints it (no leading zeros). */
export function formatAddress(hi: number, lo: number): string {
  return '0x' + ((BigInt(hi >>> 0) << 32n) | BigInt(lo >>> 0)).toString(16);
}
