"use client";
// Two saved states of a task as a JSON diff: pretty-printed in the agent's key
// order, unified or side by side, unchanged lines folded, changed words marked.
import dynamic from "next/dynamic";
import { useMemo, useState } from "react";
import { Loading } from "../ui";

/** The viewer and its library, loaded when a diff is first shown (state-diff-viewer.tsx). */
const StateDiffViewer = dynamic(() => import("./state-diff-viewer"), { ssr: false, loading: () => <Loading>Loading the diff…</Loading> });

type State = Record<string, unknown>;

/** Only `keys` of `state`, in the order given (the diff's filter). */
function pick(state: State, keys: readonly string[]): State {
  return Object.fromEntries(keys.filter((key) => Object.hasOwn(state, key)).map((key) => [key, state[key]]));
}

export function StateDiff({ before, after, keys, fromVersion, toVersion }: { before: State; after: State; keys: readonly string[]; fromVersion: number; toVersion: number }) {
  const [sideBySide, setSideBySide] = useState(false);
  const [oldText, newText] = useMemo(() => [JSON.stringify(pick(before, keys), null, 2), JSON.stringify(pick(after, keys), null, 2)], [before, after, keys]);

  return (
    <section aria-label="State diff" className="space-y-2">
      <div className="flex items-center gap-2 text-xs">
        <h3 className="font-medium text-slate-700">Diff of the keys shown</h3>
        <span className="ml-auto" />
        <div role="group" aria-label="Diff layout" className="flex overflow-hidden rounded border border-slate-300">
          {[false, true].map((split) => (
            <button key={String(split)} type="button" aria-pressed={sideBySide === split} onClick={() => setSideBySide(split)} className={`px-2 py-0.5 ${sideBySide === split ? "bg-slate-800 text-white" : "bg-white text-slate-700"}`}>
              {split ? "Side by side" : "Unified"}
            </button>
          ))}
        </div>
      </div>
      <div data-testid="state-diff" className="overflow-hidden rounded border border-slate-200">
        <StateDiffViewer oldText={oldText} newText={newText} sideBySide={sideBySide} fromVersion={fromVersion} toVersion={toVersion} />
      </div>
    </section>
  );
}
