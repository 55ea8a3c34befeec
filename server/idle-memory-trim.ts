// Hands the C allocator's free memory back to the system when the server goes
// quiet after its resident memory grew. glibc gives back on its own only the
// free space at the top of each heap; what is freed below it in the per-thread
// arenas (V8's compilers on background threads leave tens of MB there after a
// load, most from the embedded database's WebAssembly) stays until
// malloc_trim is called, which Node never does.
import { performance, type EventLoopUtilization } from "node:perf_hooks";
import { log } from "./log.ts";

/** Below this share of an interval spent busy, the event loop counts as quiet. */
const QUIET_UTILIZATION = 0.05;
/** Growth of the resident set (MB) since its low point after the last trim that is worth a trim. */
const GROWTH_WORTH_TRIMMING_MB = 16;
const CHECK_EVERY_MS = 10_000;

/**
 * glibc's malloc_trim(0), or null where the C library is not glibc (musl,
 * macOS, Windows) or koffi is not installed. A trim costs the thread that
 * calls it several milliseconds even when there is nothing left to return,
 * hence the conditions below.
 */
export async function glibcMallocTrim(): Promise<(() => void) | null> {
  const { header } = process.report.getReport() as { header?: { glibcVersionRuntime?: string } };
  if (!header?.glibcVersionRuntime) return null;
  try {
    // Loaded here, not at the top: koffi is an optional dependency, and the server starts without it.
    const { default: koffi } = await import("koffi");
    const mallocTrim = koffi.load("libc.so.6").func("int malloc_trim(size_t pad)");
    return () => void mallocTrim(0);
  } catch (error) {
    log.debug("the allocator's free memory is not handed back: glibc's malloc_trim could not be loaded", error);
    return null;
  }
}

export interface IdleMemoryTrimOptions {
  trim: () => void;
  /** The process's resident set in bytes (process.memoryUsage.rss). */
  residentBytes?: () => number;
  /** The event loop's utilization: in all, or between two readings (performance.eventLoopUtilization). */
  utilization?: (newer?: EventLoopUtilization, older?: EventLoopUtilization) => EventLoopUtilization;
}

/**
 * Checks every CHECK_EVERY_MS: an interval in which the event loop was quiet, after
 * the resident set grew by at least GROWTH_WORTH_TRIMMING_MB since its lowest
 * point after the last trim, trims once. Under load it never trims, nor again
 * and again on an idle server. A check that fails stops the checks: the trim
 * is a saving, never a reason for the server to fail.
 */
export class IdleMemoryTrim {
  readonly #trim: () => void;
  readonly #residentBytes: () => number;
  readonly #utilization: NonNullable<IdleMemoryTrimOptions["utilization"]>;
  #timer: NodeJS.Timeout | undefined;
  #lastCheck: EventLoopUtilization;
  #lowSinceTrim: number;

  constructor(options: IdleMemoryTrimOptions) {
    this.#trim = options.trim;
    this.#residentBytes = options.residentBytes ?? process.memoryUsage.rss;
    this.#utilization = options.utilization ?? performance.eventLoopUtilization;
    this.#lastCheck = this.#utilization();
    this.#lowSinceTrim = this.#residentBytes();
  }

  start(): void {
    this.#timer ??= setInterval(() => {
      try {
        this.check();
      } catch (error) {
        log.warn("handing the allocator's free memory back failed; no longer trying", error);
        this.stop();
      }
    }, CHECK_EVERY_MS);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** One check; true when it trimmed. */
  check(): boolean {
    const now = this.#utilization();
    const quiet = this.#utilization(now, this.#lastCheck).utilization < QUIET_UTILIZATION;
    this.#lastCheck = now;
    const resident = this.#residentBytes();
    this.#lowSinceTrim = Math.min(this.#lowSinceTrim, resident);
    if (!quiet || resident - this.#lowSinceTrim < GROWTH_WORTH_TRIMMING_MB * 2 ** 20) return false;
    const started = performance.now();
    this.#trim();
    this.#lowSinceTrim = this.#residentBytes();
    log.debug(`trimmed the allocator's free memory in ${(performance.now() - started).toFixed(1)} ms: the resident set went from ${(resident / 2 ** 20).toFixed(0)} to ${(this.#lowSinceTrim / 2 ** 20).toFixed(0)} MB`);
    return true;
  }
}
