import { describe, expect, it, vi } from "vitest";
import type { EventLoopUtilization } from "node:perf_hooks";
import { glibcMallocTrim, IdleMemoryTrim } from "./idle-memory-trim.ts";

const MB = 2 ** 20;

/** An event loop and a resident set the test moves by hand. */
function fakeProcess(residentMb: number) {
  let active = 0;
  let idle = 0;
  let resident = residentMb * MB;
  let trims = 0;
  const reading = (): EventLoopUtilization => ({ active, idle, utilization: active / (active + idle || 1) });
  const utilization = (newer?: EventLoopUtilization, older?: EventLoopUtilization): EventLoopUtilization => {
    if (!newer || !older) return reading();
    const [a, i] = [newer.active - older.active, newer.idle - older.idle];
    return { active: a, idle: i, utilization: a / (a + i || 1) };
  };
  const trim = new IdleMemoryTrim({
    trim: () => {
      trims += 1;
      resident -= 40 * MB;
    },
    residentBytes: () => resident,
    utilization,
  });
  return {
    trim,
    /** The next interval of 10 s: `busyMs` of it spent running, and the resident set moved by `growMb`. */
    interval(busyMs: number, growMb = 0) {
      active += busyMs;
      idle += 10_000 - busyMs;
      resident += growMb * MB;
      return trim.check();
    },
    trims: () => trims,
  };
}

describe("idle memory trim", () => {
  it("trims once when the server goes quiet after its memory grew, and not again while nothing grows", () => {
    const server = fakeProcess(150);
    expect(server.interval(9_000, 200)).toBe(false); // under load
    expect(server.interval(100)).toBe(true); // quiet after the load
    expect(server.interval(0)).toBe(false);
    expect(server.interval(50)).toBe(false);
    expect(server.trims()).toBe(1);
  });

  it("never trims under load, however much the memory grew", () => {
    const server = fakeProcess(150);
    for (let i = 0; i < 5; i++) expect(server.interval(2_000, 100)).toBe(false);
    expect(server.trims()).toBe(0);
  });

  it("counts growth from the lowest the memory fell to after the last trim", () => {
    const server = fakeProcess(150);
    server.interval(9_000, 200);
    expect(server.interval(0)).toBe(true);
    server.interval(0, -60); // the garbage collector gave some back
    expect(server.interval(0, 15)).toBe(false); // 15 MB above the low point: not worth a trim
    expect(server.interval(0, 2)).toBe(true);
  });

  it("leaves a small growth alone", () => {
    const server = fakeProcess(150);
    expect(server.interval(0, 15)).toBe(false);
    expect(server.trims()).toBe(0);
  });

  it("stops checking, and leaves the server running, when a check fails", () => {
    vi.useFakeTimers();
    try {
      let reads = 0;
      const trim = new IdleMemoryTrim({
        trim: () => undefined,
        residentBytes: () => {
          reads += 1;
          if (reads > 1) throw new Error("/proc cannot be read");
          return 150 * MB;
        },
      });
      trim.start();
      expect(() => vi.advanceTimersByTime(10_000)).not.toThrow();
      vi.advanceTimersByTime(60_000);
      expect(reads).toBe(2);
    } finally {
      vi.useRealTimers();
    }
  });

  it("finds glibc's malloc_trim on this machine and calls it", async () => {
    const report = process.report.getReport() as { header?: { glibcVersionRuntime?: string } };
    const mallocTrim = await glibcMallocTrim();
    if (!report.header?.glibcVersionRuntime) return expect(mallocTrim).toBeNull();
    expect(mallocTrim).not.toBeNull();
    expect(() => mallocTrim!()).not.toThrow();
  });
});
