"use client";
// The diff viewer itself, in a module of its own: react-diff-viewer-continued
// (and the diff and styling code it brings) is a sixth of the inbox's script,
// and a state diff is shown only when an operator opens one, so state-diff.tsx
// loads this module then.
import ReactDiffViewer, { DiffMethod } from "react-diff-viewer-continued";

const DIFF_STYLES = {
  // The library's default is at least 1000 px wide, which a task panel at 1280 px is not.
  diffContainer: { minWidth: 0 },
  contentText: { fontSize: "11px", lineHeight: "1.45", wordBreak: "break-word" as const, overflowWrap: "anywhere" as const },
  lineNumber: { fontSize: "11px" },
  gutter: { minWidth: "2.25rem", padding: "0 6px" },
  codeFoldContent: { fontSize: "11px" },
  titleBlock: { fontSize: "12px", padding: "4px 8px" },
};

export default function StateDiffViewer({ oldText, newText, sideBySide, fromVersion, toVersion }: { oldText: string; newText: string; sideBySide: boolean; fromVersion: number; toVersion: number }) {
  return (
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
  );
}
