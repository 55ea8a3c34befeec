"use client";
// JSON an agent sent, as a tree (react-json-view-lite): keys in the order
// sent and quoted, nested values collapsible with the keyboard too, strings
// wrapping rather than hidden, types coloured.
import { allExpanded, defaultStyles, JsonView } from "react-json-view-lite";
import "react-json-view-lite/dist/index.css";
import { JsonView as PlainJson } from "./ui";

const STYLE = {
  ...defaultStyles,
  container: "font-mono text-xs leading-5 break-words whitespace-pre-wrap",
  quotesForFieldNames: true,
};

/** `bare`: no frame of its own (a value inside another view of the arguments). */
export function JsonTree({ value, label, bare = false }: { value: unknown; label: string; bare?: boolean }) {
  // The tree needs an object or an array at the top; anything else is one value.
  if (value === null || typeof value !== "object") return <PlainJson value={value} label={label} className="whitespace-pre-wrap break-words" />;
  return (
    <div role="group" aria-label={label} className={bare ? "min-w-0" : "rounded border border-slate-200 bg-slate-50 p-3"}>
      <JsonView data={value as object} style={STYLE} shouldExpandNode={allExpanded} />
    </div>
  );
}
