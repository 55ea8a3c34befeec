// The server's logger (pino): one JSON object per line on stderr, with the
// time, level and message, and any detail as fields: an error under "err"
// with its stack. TOLLGATE_LOG_FORMAT=text prints the same as readable lines
// for people watching a terminal (the demo does).
import { pino, type Logger } from "pino";
import pretty from "pino-pretty";

type Level = "debug" | "info" | "warn" | "error";
export type LogFormat = "json" | "text";

// Levels by name ("level":"warn"), which collectors index without a lookup table.
const options = { base: { service: "tollgate" }, timestamp: pino.stdTimeFunctions.isoTime, formatters: { level: (label: string) => ({ level: label }) } };

function create(format: LogFormat): Logger {
  if (format === "text") return pino(options, pretty({ destination: 2, sync: true, colorize: false, ignore: "pid,hostname,service", translateTime: "SYS:standard" }));
  return pino(options, pino.destination({ dest: 2, sync: true }));
}

let logger = create("json");
let level: Level | "silent" = "info";
logger.level = level;

export function setLogLevel(next: Level | "silent"): void {
  level = next;
  logger.level = next;
}

export function setLogFormat(format: LogFormat): void {
  logger = create(format);
  logger.level = level;
}

function write(at: Level, message: string, detail?: unknown): void {
  if (detail === undefined) logger[at](message);
  else if (detail instanceof Error) logger[at]({ err: detail }, message);
  else logger[at]({ detail }, message);
}

export const log = {
  debug: (message: string, detail?: unknown) => write("debug", message, detail),
  info: (message: string, detail?: unknown) => write("info", message, detail),
  warn: (message: string, detail?: unknown) => write("warn", message, detail),
  error: (message: string, detail?: unknown) => write("error", message, detail),
};
