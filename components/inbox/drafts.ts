"use client";
// Half-written decisions (a rejection message, an answer, edited arguments)
// kept in this tab's session storage, so a reload does not lose them, and so
// that when someone else decides first the operator learns theirs was not sent.
import { useCallback, useState } from "react";

export type DraftField = "message" | "answer" | "edit";

const key = (approvalId: string, field: DraftField) => `tollgate.draft.${approvalId}.${field}`;

export function readDraft(approvalId: string, field: DraftField): string | null {
  if (typeof window === "undefined") return null;
  return window.sessionStorage.getItem(key(approvalId, field));
}

/** The drafts left for an approval, by field. */
export function draftsOf(approvalId: string): Partial<Record<DraftField, string>> {
  const found: Partial<Record<DraftField, string>> = {};
  for (const field of ["message", "answer", "edit"] as const) {
    const value = readDraft(approvalId, field);
    if (value !== null) found[field] = value;
  }
  return found;
}

export function clearDrafts(approvalId: string): void {
  for (const field of ["message", "answer", "edit"] as const) window.sessionStorage.removeItem(key(approvalId, field));
}

/** A text field whose value survives a reload until it is sent or discarded. */
export function useDraft(approvalId: string, field: DraftField, initial: string): [string, (value: string) => void] {
  const [value, setValue] = useState(() => readDraft(approvalId, field) ?? initial);
  const update = useCallback(
    (next: string) => {
      setValue(next);
      if (next === initial || next === "") window.sessionStorage.removeItem(key(approvalId, field));
      else window.sessionStorage.setItem(key(approvalId, field), next);
    },
    [approvalId, field, initial],
  );
  return [value, update];
}
