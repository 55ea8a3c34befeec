"use client";
// A labelled form field with its hint and its error, wired for screen readers.
import { useId, type ReactNode } from "react";

export interface FieldControlProps {
  id: string;
  "aria-invalid": boolean | undefined;
  "aria-describedby": string | undefined;
}

export const inputClass = (invalid: boolean, width = "w-full") =>
  `block ${width} min-w-0 rounded border px-2 py-1 text-sm ${invalid ? "border-red-500 bg-red-50/40" : "border-slate-300 bg-white"}`;

export function Field({
  label,
  error,
  hint,
  className = "",
  children,
}: {
  label: ReactNode;
  error?: string;
  hint?: ReactNode;
  className?: string;
  children: (props: FieldControlProps) => ReactNode;
}) {
  const id = useId();
  const described = [hint ? `${id}-hint` : null, error ? `${id}-error` : null].filter(Boolean).join(" ") || undefined;
  return (
    <div className={`min-w-0 space-y-1 ${className}`}>
      <label htmlFor={id} className="block text-xs font-medium text-slate-700">
        {label}
      </label>
      {children({ id, "aria-invalid": error ? true : undefined, "aria-describedby": described })}
      {hint ? (
        <p id={`${id}-hint`} className="text-xs text-slate-500">
          {hint}
        </p>
      ) : null}
      {error ? (
        <p id={`${id}-error`} className="text-xs text-red-700" data-testid="field-error">
          {error}
        </p>
      ) : null}
    </div>
  );
}
