// Timeouts in the editor: a number and a unit on screen, milliseconds on the wire.

export const DURATION_UNITS = [
  { value: "s", label: "seconds", ms: 1000 },
  { value: "m", label: "minutes", ms: 60_000 },
  { value: "h", label: "hours", ms: 3_600_000 },
  { value: "d", label: "days", ms: 86_400_000 },
] as const;

export type DurationUnit = (typeof DURATION_UNITS)[number]["value"];

export interface DurationText {
  amount: string;
  unit: DurationUnit;
}

/** The largest unit that shows the value as a whole number; no timeout is an empty amount. */
export function durationFromMs(ms: number | null): DurationText {
  if (ms === null) return { amount: "", unit: "m" };
  for (const unit of [...DURATION_UNITS].reverse()) {
    if (ms % unit.ms === 0) return { amount: String(ms / unit.ms), unit: unit.value };
  }
  return { amount: String(ms / 1000), unit: "s" };
}

/** Empty means no timeout; anything else must be a positive number. */
export function durationToMs(text: DurationText): { ok: true; ms: number | null } | { ok: false; message: string } {
  const amount = text.amount.trim();
  if (!amount) return { ok: true, ms: null };
  const value = Number(amount);
  if (!Number.isFinite(value) || value <= 0) return { ok: false, message: `"${amount}" is not a positive number; leave it empty for no timeout` };
  const unit = DURATION_UNITS.find((candidate) => candidate.value === text.unit)!;
  return { ok: true, ms: Math.round(value * unit.ms) };
}
