"use client";
// A new secret, shown this once with a copy button and a warning.
import { useState } from "react";

export function ShownOnce({ label, secret, onDone }: { label: string; secret: string; onDone(): void }) {
  const [copied, setCopied] = useState(false);
  return (
    <div role="alert" aria-label={label} className="space-y-2 rounded border border-amber-300 bg-amber-50 p-3 text-sm text-amber-950">
      <p className="font-medium">{label}: copy it now. It is shown only this once.</p>
      <div className="flex flex-wrap items-center gap-2">
        <code data-testid="shown-once" className="min-w-0 flex-1 rounded bg-white px-2 py-1 font-mono text-xs break-all">
          {secret}
        </code>
        <button
          type="button"
          onClick={() => void navigator.clipboard?.writeText(secret).then(() => setCopied(true), () => setCopied(false))}
          className="rounded border border-amber-400 bg-white px-2 py-1 text-xs"
        >
          {copied ? "Copied" : "Copy"}
        </button>
        <button type="button" onClick={onDone} className="rounded px-2 py-1 text-xs hover:bg-amber-100">
          Done
        </button>
      </div>
    </div>
  );
}
