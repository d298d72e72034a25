// Small helpers shared by the benchmark cases: repeated timing with warm-up, medians, and the
// readable table printed before the final JSON line.

/** Thrown when a baseline or prerequisite is missing; the bench prints the reason and exits non-zero. */
export class BenchUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BenchUnavailableError';
  }
}

export function median(values: readonly number[]): number {
  if (values.length === 0) throw new RangeError('median of no values');
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

export function nowNs(): number {
  return Number(process.hrtime.bigint());
}

/**
 * CPU time this process has used (every thread: the JS thread and V8's helpers), in ns. For single-threaded
 * CPU-bound work on a machine shared with other jobs it measures the work, where wall time also measures them.
 */
export function cpuNs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) * 1000;
}

/** Runs `body` `warmup` times untimed, then `runs` times, returning each run's measured value. */
export async function repeat(warmup: number, runs: number, body: () => number | Promise<number>): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await body();
  const values: number[] = [];
  for (let i = 0; i < runs; i++) values.push(await body());
  return values;
}

/** Rounds to `digits` significant digits, keeping JSON output short but honest. */
export function round(value: number, digits = 4): number {
  if (!Number.isFinite(value) || value === 0) return value;
  return Number(value.toPrecision(digits));
}

export function mib(bytes: number): string {
  return `${bytes / (1024 * 1024)} MiB`;
}

export class Table {
  private readonly rows: string[][] = [];

  constructor(private readonly header: readonly string[]) {}

  add(...cells: (string | number)[]): void {
    this.rows.push(cells.map((cell) => (typeof cell === 'number' ? String(Number.isInteger(cell) ? cell : round(cell)) : cell)));
  }

  toString(): string {
    const widths = this.header.map((title, column) => Math.max(title.length, ...this.rows.map((row) => (row[column] ?? '').length)));
    const line = (cells: readonly string[]) =>
      cells.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]) : cell.padStart(widths[column]))).join('  ');
    return [line(this.header), widths.map((w) => '-'.repeat(w)).join('  '), ...this.rows.map(line)].join('\n');
  }
}
