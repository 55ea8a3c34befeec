// A small leveled logger for the server process: one line per event, to stderr.
type Level = "debug" | "info" | "warn" | "error";
const order: Record<Level | "silent", number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

let threshold = order.info;

export function setLogLevel(level: Level | "silent"): void {
  threshold = order[level];
}

function write(level: Level, message: string, detail?: unknown): void {
  if (order[level] < threshold) return;
  const suffix = detail instanceof Error ? ` ${detail.stack ?? detail.message}` : detail === undefined ? "" : ` ${JSON.stringify(detail)}`;
  process.stderr.write(`${new Date().toISOString()} ${level.toUpperCase()} ${message}${suffix}\n`);
}

export const log = {
  debug: (message: string, detail?: unknown) => write("debug", message, detail),
  info: (message: string, detail?: unknown) => write("info", message, detail),
  warn: (message: string, detail?: unknown) => write("warn", message, detail),
  error: (message: string, detail?: unknown) => write("error", message, detail),
};
