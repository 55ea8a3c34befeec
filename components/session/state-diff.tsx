"use client";
// Two saved states of a task as a JSON diff: pretty-printed in the agent's key
// order, unified or side by side, unchanged lines folded, changed words marked.
import { useMemo, useState } from "react";
import ReactDiffViewer, { DiffMethod } from "react-diff-viewer-continued";

type State = Record<string, unknown>;

/** Only `keys` of `state`, in the order given (the diff's filter). */
function pick(state: State, keys: readonly string[]): State {
  return Object.fromEntries(keys.filter((key) => Object.hasOwn(state, key)).map((key) => [key, state[key]]));
}

const DIFF_STYLES = {
  // The library's default is at least 1000 px wide, which a task panel at 1280 px is not.
  diffContainer: { minWidth: 0 },
  contentText: { fontSize: "11px", lineHeight: "1.45", wordBreak: "break-word" as const, overflowWrap: "anywhere" as const },
  lineNumber: { fontSize: "11px" },
  gutter: { minWidth: "2.25rem", padding: "0 6px" },
  codeFoldContent: { fontSize: "11px" },
  titleBlock: { fontSize: "12px", padding: "4px 8px" },
};

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
        <ReactDiffViewer
          oldValue={oldText}
          newValue={newText}
          splitView={sideBySide}
          compareMethod={DiffMethod.WORDS}
          showDiffOnly
          extraLinesSurroundingDiff={2}
          leftTitle={`v${fromVersion}`}
          rightTitle={sideBySide ? `v${toVersion}` : undefined}
          hideSummary
          disableWorker
          styles={DIFF_STYLES}
        />
      </div>
    </section>
  );
}
