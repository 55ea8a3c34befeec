// Small statistics for the benchmark: percentiles and the spread across runs.
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

export const median = (values: number[]) => percentile(values, 50);

/** "median (min–max)" of one figure measured over several runs. */
export function spread(values: number[], digits = 1): string {
  const fmt = (value: number) => value.toFixed(digits);
  return `${fmt(median(values))} (${fmt(Math.min(...values))}–${fmt(Math.max(...values))})`;
}
