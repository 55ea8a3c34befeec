"use client";
// A timeout as an amount and a unit; empty means no timeout.
import { DURATION_UNITS, type DurationText, type DurationUnit } from "./duration";
import { inputClass, type FieldControlProps } from "./field";

export function DurationInput({
  value,
  onChange,
  disabled,
  control,
  unitLabel,
}: {
  value: DurationText;
  onChange(next: DurationText): void;
  disabled?: boolean;
  control: FieldControlProps;
  unitLabel: string;
}) {
  return (
    <div className="flex gap-2">
      <input
        {...control}
        inputMode="decimal"
        placeholder="none"
        value={value.amount}
        disabled={disabled}
        onChange={(event) => onChange({ ...value, amount: event.target.value })}
        className={`${inputClass(Boolean(control["aria-invalid"]), "w-24")} tabular-nums`}
      />
      <select
        aria-label={unitLabel}
        value={value.unit}
        disabled={disabled}
        onChange={(event) => onChange({ ...value, unit: event.target.value as DurationUnit })}
        className="rounded border border-slate-300 bg-white px-2 py-1 text-sm"
      >
        {DURATION_UNITS.map((unit) => (
          <option key={unit.value} value={unit.value}>
            {unit.label}
          </option>
        ))}
      </select>
    </div>
  );
}
