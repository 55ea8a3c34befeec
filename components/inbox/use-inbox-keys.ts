"use client";
// The inbox's single-key shortcuts (j/k move, a approve, r reject, e edit, x
// select), which an operator can turn off on this browser (WCAG 2.1.4).
import { useEffect, useState } from "react";

const SHORTCUTS_KEY = "tollgate.shortcuts";

/** On unless the operator turned them off on this browser. */
export function useShortcutsSetting(): [boolean, (on: boolean) => void] {
  const [on, setOn] = useState(true);
  useEffect(() => setOn(window.localStorage.getItem(SHORTCUTS_KEY) !== "off"), []);
  return [
    on,
    (next) => {
      window.localStorage.setItem(SHORTCUTS_KEY, next ? "on" : "off");
      setOn(next);
    },
  ];
}

function isTyping(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  return target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName);
}

/** Deciding keys get the time their key went down (the event's timeStamp), for the decision controls' arming. */
export interface InboxKeyActions {
  move(delta: 1 | -1): void;
  approve(startedAt: number): void;
  reject(startedAt: number): void;
  edit(startedAt: number): void;
  /** Absent where selecting makes no sense (History, viewers). */
  toggleSelected?: () => void;
}

export function useInboxKeys(enabled: boolean, actions: InboxKeyActions) {
  useEffect(() => {
    if (!enabled) return;
    const byKey: Record<string, ((startedAt: number) => void) | undefined> = {
      j: () => actions.move(1),
      ArrowDown: () => actions.move(1),
      k: () => actions.move(-1),
      ArrowUp: () => actions.move(-1),
      a: actions.approve,
      r: actions.reject,
      e: actions.edit,
      x: actions.toggleSelected && (() => actions.toggleSelected?.()),
    };
    function onKey(event: KeyboardEvent) {
      if (event.metaKey || event.ctrlKey || event.altKey || isTyping(event.target)) return;
      const action = byKey[event.key];
      if (!action) return;
      event.preventDefault();
      // A held key repeats: only its first press counts, for moving as for deciding.
      if (event.repeat && ["a", "r", "e", "x"].includes(event.key)) return;
      action(event.timeStamp);
    }
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [enabled, actions]);
}
