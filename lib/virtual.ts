// A fixed-row-height virtualizer: only the rows in (and just around) the
// viewport are rendered, so lists of thousands of approvals or tasks stay fast.
"use client";
import { useCallback, useEffect, useLayoutEffect, useRef, useState, type RefObject } from "react";

export interface VirtualRows {
  start: number;
  end: number;
  totalHeight: number;
  offsetTop: number;
  scrollToIndex(index: number): void;
}

export function useVirtualRows(
  containerRef: RefObject<HTMLElement | null>,
  count: number,
  rowHeight: number,
  overscan = 8,
): VirtualRows {
  const [scrollTop, setScrollTop] = useState(0);
  const [viewport, setViewport] = useState(600);
  const frame = useRef<number | null>(null);

  useLayoutEffect(() => {
    const element = containerRef.current;
    if (!element) return;
    setViewport(element.clientHeight || 600);
    const observer = new ResizeObserver(() => setViewport(element.clientHeight || 600));
    observer.observe(element);
    return () => observer.disconnect();
  }, [containerRef]);

  useEffect(() => {
    const element = containerRef.current;
    if (!element) return;
    const onScroll = () => {
      if (frame.current !== null) return;
      frame.current = requestAnimationFrame(() => {
        frame.current = null;
        setScrollTop(element.scrollTop);
      });
    };
    element.addEventListener("scroll", onScroll, { passive: true });
    return () => {
      element.removeEventListener("scroll", onScroll);
      if (frame.current !== null) cancelAnimationFrame(frame.current);
      frame.current = null;
    };
  }, [containerRef]);

  const start = Math.max(0, Math.floor(scrollTop / rowHeight) - overscan);
  const end = Math.min(count, Math.ceil((scrollTop + viewport) / rowHeight) + overscan);

  const scrollToIndex = useCallback(
    (index: number) => {
      const element = containerRef.current;
      if (!element) return;
      const top = index * rowHeight;
      if (top < element.scrollTop) element.scrollTop = top;
      else if (top + rowHeight > element.scrollTop + element.clientHeight) element.scrollTop = top + rowHeight - element.clientHeight;
    },
    [containerRef, rowHeight],
  );

  return { start, end, totalHeight: count * rowHeight, offsetTop: start * rowHeight, scrollToIndex };
}
