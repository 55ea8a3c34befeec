"use client";
// Proposed vs approved vs executed arguments of one approval, side by side, key
// by key, with every value that differs from the proposal marked in words and colour.
import { compactJson, prettyJson } from "./ui";

type Column = { label: string; value: unknown; present: boolean };

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

export function ArgsComparison({ proposed, approved, executed, executedAt }: { proposed: unknown; approved: unknown; executed: unknown; executedAt: string | null }) {
  const columns: Column[] = [
    { label: "Proposed", value: proposed, present: true },
    { label: "Approved", value: approved, present: approved !== null && approved !== undefined },
    { label: "Executed", value: executed, present: executedAt !== null },
  ];
  const objects = columns.every((column) => !column.present || isPlainObject(column.value));
  const keys = objects
    ? [...new Set(columns.flatMap((column) => (column.present && isPlainObject(column.value) ? Object.keys(column.value) : [])))]
    : [];

  return (
    <table className="w-full table-fixed border-collapse text-xs" aria-label="Proposed, approved and executed arguments">
      <thead>
        <tr className="text-left text-slate-500">
          {objects ? <th className="w-28 border-b border-slate-200 py-1 pr-2 font-medium">Argument</th> : null}
          {columns.map((column) => (
            <th key={column.label} scope="col" className="border-b border-slate-200 px-2 py-1 font-medium">
              {column.label}
            </th>
          ))}
        </tr>
      </thead>
      <tbody className="font-mono">
        {objects ? (
          keys.map((key) => (
            <tr key={key} className="align-top">
              <th scope="row" className="border-b border-slate-100 py-1 pr-2 text-left font-medium break-all">
                {key}
              </th>
              {columns.map((column) => (
                <Cell key={column.label} column={column} compareTo={columns[0]!} approved={column.label === "Executed" && columns[1]!.present ? columns[1]! : null} field={key} />
              ))}
            </tr>
          ))
        ) : (
          <tr className="align-top">
            {columns.map((column) => (
              <td key={column.label} className="border-b border-slate-100 px-2 py-1">
                {column.present ? <pre className="whitespace-pre-wrap break-all">{prettyJson(column.value)}</pre> : <Absent column={column} />}
              </td>
            ))}
          </tr>
        )}
      </tbody>
    </table>
  );
}

function Absent({ column }: { column: Column }) {
  return <span className="font-sans text-slate-400">{column.label === "Executed" ? "not reported" : "—"}</span>;
}

function Cell({ column, compareTo, approved, field }: { column: Column; compareTo: Column; approved: Column | null; field: string }) {
  if (!column.present) {
    return (
      <td className="border-b border-slate-100 px-2 py-1">
        <Absent column={column} />
      </td>
    );
  }
  const record = column.value as Record<string, unknown>;
  const has = Object.hasOwn(record, field);
  const base = compareTo.value as Record<string, unknown>;
  const differs = column !== compareTo && (has !== Object.hasOwn(base, field) || !same(record[field], base[field]));
  // What ran is also compared with what was approved: a difference there is a deviation, not an edit.
  const approvedRecord = approved?.value as Record<string, unknown> | undefined;
  const deviates = approvedRecord !== undefined && (has !== Object.hasOwn(approvedRecord, field) || !same(record[field], approvedRecord[field]));
  return (
    <td
      className={`border-b border-slate-100 px-2 py-1 break-all ${deviates ? "bg-red-50 ring-2 ring-inset ring-red-500" : differs ? "bg-amber-50" : ""}`}
      data-differs={differs || undefined}
      data-deviates={deviates || undefined}
    >
      {has ? compactJson(record[field], 400) : <span className="font-sans text-slate-400">(absent)</span>}
      {deviates ? (
        <span className="ml-1 rounded bg-red-600 px-1 font-sans text-[10px] font-semibold text-white">not what was approved</span>
      ) : differs ? (
        <span className="ml-1 rounded bg-amber-200 px-1 font-sans text-[10px] font-semibold text-amber-900">changed</span>
      ) : null}
    </td>
  );
}
