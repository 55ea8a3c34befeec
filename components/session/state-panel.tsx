"use client";
// A task's saved state versions and the diff between any two of them: every
// added, removed and changed key with its owner, filterable, then a JSON diff
// of those keys, readable for states of hundreds of keys.
import { useEffect, useMemo, useState } from "react";
import { formatBytes, formatTime } from "@/lib/format";
import { isMissingProcedure, useStateDiff, useStateHistory, useStateVersion, type StateKeyChange } from "@/lib/state-api";
import { Empty, ErrorNote, Loading } from "../ui";
import { StateDiff } from "./state-diff";

const CHANGE_STYLE: Record<StateKeyChange["change"], string> = {
  added: "bg-emerald-50 text-emerald-900",
  removed: "bg-red-50 text-red-900",
  changed: "bg-amber-50 text-amber-900",
};
const CHANGE_MARK: Record<StateKeyChange["change"], string> = { added: "+ added", removed: "− removed", changed: "~ changed" };

function MissingState() {
  return (
    <p role="alert" className="rounded border border-slate-300 bg-slate-100 p-3 text-sm text-slate-700">
      This server does not provide state history yet (state.history and state.diff are missing). Update Tollgate to a version with thread-state
      history to see versions and diffs here.
    </p>
  );
}

export function StatePanel({ taskId }: { taskId: string }) {
  const history = useStateHistory(taskId);
  const versions = history.data?.versions ?? [];
  const [fromVersion, setFrom] = useState<number | null>(null);
  const [toVersion, setTo] = useState<number | null>(null);
  const [keyFilter, setKeyFilter] = useState("");
  const [changeFilter, setChangeFilter] = useState<"all" | StateKeyChange["change"]>("all");

  // Default to the last two versions; keep the operator's choice once made.
  useEffect(() => {
    if (versions.length >= 1 && fromVersion === null && toVersion === null) {
      setFrom(versions.length >= 2 ? versions[versions.length - 2]!.version : 0);
      setTo(versions[versions.length - 1]!.version);
    }
  }, [versions, fromVersion, toVersion]);

  const diff = useStateDiff(taskId, fromVersion, toVersion);
  const before = useStateVersion(taskId, fromVersion);
  const after = useStateVersion(taskId, toVersion);
  const beforeState = (fromVersion === 0 ? {} : before.data?.state) ?? undefined;
  const afterState = after.data?.state ?? undefined;

  const keys = useMemo(() => {
    const needle = keyFilter.trim().toLowerCase();
    return (diff.data?.keys ?? []).filter((key) => (changeFilter === "all" || key.change === changeFilter) && (!needle || key.key.toLowerCase().includes(needle)));
  }, [diff.data, keyFilter, changeFilter]);

  // The diff follows the table: the changed keys that pass the filters, in the newer state's order.
  const shownKeys = useMemo(() => {
    const shown = new Set(keys.map((key) => key.key));
    const order = [...Object.keys(afterState ?? {}), ...Object.keys(beforeState ?? {})];
    return [...new Set(order)].filter((key) => shown.has(key));
  }, [keys, beforeState, afterState]);

  const counts = useMemo(() => {
    const result = { added: 0, removed: 0, changed: 0 };
    for (const key of diff.data?.keys ?? []) result[key.change] += 1;
    return result;
  }, [diff.data]);

  if (history.isPending) return <Loading>Loading state versions…</Loading>;
  if (history.error) return isMissingProcedure(history.error) ? <MissingState /> : <ErrorNote title="Could not load state versions" error={history.error} />;
  if (versions.length === 0) return <Empty>This task has saved no state yet.</Empty>;

  const versionSelect = (label: string, value: number | null, onChange: (value: number) => void, withEmpty = false) => (
    <label className="flex items-center gap-1">
      <span className="text-slate-600">{label}</span>
      <select aria-label={`${label} version`} value={value ?? ""} onChange={(event) => onChange(Number(event.target.value))} className="rounded border border-slate-300 px-1 py-0.5">
        {withEmpty ? <option value={0}>v0 (empty)</option> : null}
        {versions.map((version) => (
          <option key={version.version} value={version.version}>
            v{version.version}
          </option>
        ))}
      </select>
    </label>
  );

  return (
    <section aria-label="State" className="space-y-3">
      <div className="max-h-48 overflow-auto rounded border border-slate-200">
      <table className="w-full text-left text-xs" aria-label="State versions">
        <thead className="sticky top-0 bg-slate-100 text-slate-500">
          <tr>
            <th className="px-2 py-1">Version</th>
            <th>Saved</th>
            <th>By request</th>
            <th className="px-2 text-right">Size</th>
          </tr>
        </thead>
        <tbody>
          {versions.map((version) => (
            <tr key={version.version} className={`border-t border-slate-100 ${version.version === fromVersion || version.version === toVersion ? "bg-sky-50" : ""}`}>
              <td className="px-2 py-1 font-mono font-semibold">v{version.version}</td>
              <td className="tabular-nums">{formatTime(version.createdAt)}</td>
              <td className="font-mono">{version.requestId ?? "—"}</td>
              <td className="px-2 text-right tabular-nums">{formatBytes(version.sizeBytes)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      </div>

      {versions.length < 1 ? null : (
        <>
          <div className="flex flex-wrap items-center gap-3 text-xs">
            {versionSelect("From", fromVersion, setFrom, true)}
            {versionSelect("To", toVersion, setTo)}
            <input aria-label="Filter keys" placeholder="Filter keys" value={keyFilter} onChange={(event) => setKeyFilter(event.target.value)} className="w-40 rounded border border-slate-300 px-2 py-0.5" />
            <select aria-label="Show changes" value={changeFilter} onChange={(event) => setChangeFilter(event.target.value as typeof changeFilter)} className="rounded border border-slate-300 px-1 py-0.5">
              <option value="all">All changes</option>
              <option value="added">Added only</option>
              <option value="removed">Removed only</option>
              <option value="changed">Changed only</option>
            </select>
          </div>
          {fromVersion === toVersion ? (
            <Empty>Pick two different versions to compare.</Empty>
          ) : diff.isPending ? (
            <Loading>Computing the diff…</Loading>
          ) : diff.error ? (
            isMissingProcedure(diff.error) ? <MissingState /> : <ErrorNote title="Could not compute the diff" error={diff.error} />
          ) : (
            <>
              <p className="text-xs text-slate-700" data-testid="diff-summary">
                v{diff.data.fromVersion} → v{diff.data.toVersion}: <span className="font-semibold text-emerald-800">{counts.added} added</span>,{" "}
                <span className="font-semibold text-red-800">{counts.removed} removed</span>, <span className="font-semibold text-amber-800">{counts.changed} changed</span>
              </p>
              {diff.data.keys.length === 0 ? (
                <Empty>No differences between these versions.</Empty>
              ) : (
                <>
                  <div className="max-h-64 overflow-auto rounded border border-slate-200">
                    <table className="w-full text-left text-xs" aria-label="Changed keys">
                      <thead className="sticky top-0 bg-slate-100 text-slate-600">
                        <tr>
                          <th className="px-2 py-1">Key</th>
                          <th className="px-2">Change</th>
                          <th className="px-2">Owner</th>
                        </tr>
                      </thead>
                      <tbody>
                        {keys.map((key) => (
                          <tr key={key.key} data-change={key.change} className={`border-t border-slate-100 align-top ${CHANGE_STYLE[key.change]}`}>
                            <th scope="row" className="px-2 py-1 font-mono font-semibold [overflow-wrap:anywhere]">
                              {key.key}
                            </th>
                            <td className="px-2 py-1 whitespace-nowrap">{CHANGE_MARK[key.change]}</td>
                            <td className="px-2 py-1">
                              {key.owner ?? "unowned"}
                              {key.protocol ? <span className="ml-1 text-slate-500">({key.protocol})</span> : null}
                            </td>
                          </tr>
                        ))}
                      </tbody>
                    </table>
                    {keys.length === 0 ? <p className="p-3 text-xs text-slate-500">No keys match the filter.</p> : null}
                  </div>
                  {beforeState && afterState ? (
                    <StateDiff before={beforeState} after={afterState} keys={shownKeys} fromVersion={diff.data.fromVersion} toVersion={diff.data.toVersion} />
                  ) : (
                    <Loading>Loading both versions…</Loading>
                  )}
                </>
              )}
            </>
          )}
        </>
      )}
    </section>
  );
}
