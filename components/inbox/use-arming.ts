"use client";
// A control that decides accepts a press only once it has been on screen for a
// short arming delay, counted to the start of the press (pointerdown, keydown):
// after a decision the next approval opens where the last one was, and a second
// click or tap meant for the last one must not land on it. Browsers arm their
// permission prompts the same way. Auto-repeated keys never count.
//
// Times are the browser's own: a press counts from its event's timeStamp (when
// the input happened, not when a busy page got round to it) and the approval from
// the frame after it was painted, both on the document's clock.
import { useCallback, useEffect, useRef, useState, type KeyboardEvent, type MouseEvent, type PointerEvent } from "react";

/** The arming bar's animation in decision-panel.tsx lasts as long. */
export const ARMING_MS = 700;

/** Now on the clock of events' timeStamps (the document timeline's frame time, else performance.now()). */
function frameTime(): number {
  const time = document.timeline?.currentTime;
  return typeof time === "number" ? time : performance.now();
}

export interface Arming {
  /** Whether a press that starts now counts. */
  armed: boolean;
  /** Whether a press that started at `startedAt` (an event's timeStamp) counts. */
  accepts(startedAt: number): boolean;
  /**
   * Handlers for a button: its click acts only when the press that made it began
   * on it, armed. Without an action, a click that counts does what the button
   * does by default (a form's submit button submits).
   */
  press(action?: () => void): {
    onPointerDown(event: PointerEvent): void;
    onKeyDown(event: KeyboardEvent): void;
    onClick(event: MouseEvent): void;
    "aria-disabled": boolean | undefined;
    "data-armed": boolean;
  };
}

/** Arms once mounted and visible for `delay` ms; hiding the page disarms until it has been visible again as long. */
export function useArming(delay = ARMING_MS): Arming {
  const shownAt = useRef<number | null>(null);
  const [armed, setArmed] = useState(false);
  // Where the press that ends in the next click began: its start time, or null when it did not count.
  const pressStart = useRef<number | null>(null);

  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let frame: number | undefined;
    const show = () => {
      clearTimeout(timer);
      if (frame !== undefined) cancelAnimationFrame(frame);
      shownAt.current = null;
      setArmed(false);
      if (document.visibilityState !== "visible") return;
      // The frame after the one that painted it: on screen from then on.
      frame = requestAnimationFrame(() => {
        frame = requestAnimationFrame(() => {
          frame = undefined;
          shownAt.current = frameTime();
          timer = setTimeout(() => setArmed(true), delay);
        });
      });
    };
    show();
    document.addEventListener("visibilitychange", show);
    return () => {
      clearTimeout(timer);
      if (frame !== undefined) cancelAnimationFrame(frame);
      document.removeEventListener("visibilitychange", show);
    };
  }, [delay]);

  const accepts = useCallback((startedAt: number) => shownAt.current !== null && startedAt - shownAt.current >= delay, [delay]);

  const press = useCallback(
    (action?: () => void) => ({
      onPointerDown: (event: PointerEvent) => {
        pressStart.current = event.timeStamp;
      },
      onKeyDown: (event: KeyboardEvent) => {
        if (event.key !== "Enter" && event.key !== " ") return;
        if (event.repeat) {
          // A held key's repeats would click again: they never decide.
          event.preventDefault();
          pressStart.current = null;
          return;
        }
        pressStart.current = event.timeStamp;
      },
      onClick: (event: MouseEvent) => {
        // A click whose press began elsewhere (on the control this one replaced) has no
        // start here. A click with no press at all (detail 0: assistive technology)
        // counts from now.
        const startedAt = pressStart.current ?? (event.detail === 0 ? event.timeStamp : null);
        pressStart.current = null;
        if (startedAt === null || !accepts(startedAt)) {
          event.preventDefault();
          return;
        }
        action?.();
      },
      "aria-disabled": armed ? undefined : true,
      "data-armed": armed,
    }),
    [accepts, armed],
  );

  return { armed, accepts, press };
}
