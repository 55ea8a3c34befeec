// What makes a call look risky to the person deciding it: the matched rule's
// risk label and paths, the tool's MCP annotations, and well-known patterns in
// the arguments (dryRun: false, a SQL DELETE, DROP or TRUNCATE, an UPDATE or
// DELETE without WHERE). Pure. A flag says "look here"; no flag says nothing
// about safety, and the screen says so.
import { parseJsonPath, type PathSegment } from "./json-path.ts";

/**
 * The MCP tool annotations (the spec's ToolAnnotations). They are hints from
 * the agent's side: a missing hint means the spec's default (destructive,
 * not read-only, not idempotent, open world), and they may only make a call
 * look riskier, never safer.
 */
export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

export type RiskFlagKind = "rule" | "destructive-hint" | "dry-run-off" | "sql-delete" | "sql-drop" | "sql-truncate" | "sql-no-where";

export interface RiskFlag {
  kind: RiskFlagKind;
  /** Said to the operator: "SQL DELETE without WHERE". */
  label: string;
  /** The argument it is about, as a rule names it ($.query, $["a b"][0]); null for the call as a whole. */
  path: string | null;
  /** For a string argument: the part of the text that raised the flag (a statement's keywords). */
  match?: string;
  /** The value at the path as the screen shows it beside the flag: the line of the match, or the value's JSON, cut short. */
  excerpt?: string;
}

export interface RuleRisk {
  label: string | null;
  paths: readonly string[];
}

/** Every flag of a call, the rule's first; each pattern once per argument. */
export function riskFlags(args: unknown, annotations: ToolAnnotations | null, rule: RuleRisk | null): RiskFlag[] {
  const flags: RiskFlag[] = [];
  if (rule?.label || rule?.paths.length) {
    const label = rule.label ?? "flagged by the rule";
    const found = rule.paths.flatMap((path) => {
      const at = valueAt(args, path);
      return at.found ? [{ kind: "rule" as const, label, path, excerpt: excerptOf(at.value) }] : [];
    });
    flags.push(...(found.length ? found : [{ kind: "rule" as const, label, path: null }]));
  }
  if (annotations && isDestructiveHint(annotations)) {
    flags.push({
      kind: "destructive-hint",
      label: annotations.destructiveHint === undefined ? "may be destructive (no destructiveHint: MCP default)" : "destructive, says the tool",
      path: null,
    });
  }
  walk(args, [], (value, segments) => {
    const path = pathOf(segments);
    const key = segments.at(-1);
    if (typeof key === "string" && DRY_RUN_KEY.test(key) && (value === false || value === "false")) {
      flags.push({ kind: "dry-run-off", label: `${key} is false: this runs for real`, path, excerpt: excerptOf(value) });
    }
    if (typeof value === "string") for (const found of sqlRisks(value)) flags.push({ ...found, path, excerpt: excerptOf(value, found.match) });
  });
  return flags;
}

/**
 * MCP's reading of the hints, leaning to risk: destructive unless the tool
 * says it is not (destructiveHint false) or only reads (readOnlyHint true and
 * no destructiveHint true beside it).
 */
export function isDestructiveHint(annotations: ToolAnnotations): boolean {
  if (annotations.destructiveHint === true) return true;
  if (annotations.destructiveHint === false) return false;
  return annotations.readOnlyHint !== true;
}

const DRY_RUN_KEY = /^dry[-_]?run$/i;

// ---- Arguments ---------------------------------------------------------------

const MAX_DEPTH = 64;

function walk(value: unknown, segments: PathSegment[], visit: (value: unknown, segments: PathSegment[]) => void): void {
  visit(value, segments);
  if (segments.length >= MAX_DEPTH || value === null || typeof value !== "object") return;
  if (Array.isArray(value)) value.forEach((item, index) => walk(item, [...segments, index], visit));
  else for (const [key, item] of Object.entries(value)) walk(item, [...segments, key], visit);
}

const PLAIN_KEY = /^[A-Za-z_$][\w$-]*$/;

/** A path in the syntax rules use: $.query, $.rows[0], $["a key"]. */
export function pathOf(segments: readonly PathSegment[]): string {
  return `$${segments.map((segment) => (typeof segment === "number" ? `[${segment}]` : PLAIN_KEY.test(segment) ? `.${segment}` : `[${JSON.stringify(segment)}]`)).join("")}`;
}

function valueAt(root: unknown, path: string): { found: false } | { found: true; value: unknown } {
  let segments: PathSegment[];
  try {
    segments = parseJsonPath(path);
  } catch {
    return { found: false };
  }
  let current = root;
  for (const segment of segments) {
    if (typeof segment === "number") {
      if (!Array.isArray(current) || segment >= current.length) return { found: false };
      current = current[segment];
    } else {
      if (current === null || typeof current !== "object" || Array.isArray(current) || !Object.hasOwn(current, segment)) return { found: false };
      current = (current as Record<string, unknown>)[segment];
    }
  }
  return { found: true, value: current };
}

const EXCERPT_CHARS = 160;

/** A string's line that holds `match` (its first line without one); any other value as JSON; cut at 160 characters. */
export function excerptOf(value: unknown, match?: string): string {
  let text: string;
  if (typeof value === "string") {
    const at = match ? value.indexOf(match) : 0;
    const start = value.lastIndexOf("\n", at) + 1;
    const end = value.indexOf("\n", at + (match?.length ?? 0));
    text = value.slice(start, end === -1 ? undefined : end).trim();
  } else {
    text = JSON.stringify(value) ?? "null";
  }
  return text.length > EXCERPT_CHARS ? `${text.slice(0, EXCERPT_CHARS - 1)}…` : text;
}

// ---- SQL ---------------------------------------------------------------------

type Token = { word: string; at: number } | { punct: "(" | ")" | ";"; at: number };

const DOLLAR_TAG = /^\$[A-Za-z_]*\$/;

/**
 * The words and brackets of a text read as SQL: comments, quoted strings and
 * quoted identifiers are skipped, so a WHERE or DELETE inside them counts for
 * nothing. Made for flagging any dialect, so it parses no grammar (a parser
 * refuses what its dialect lacks, and a refused statement would go unflagged).
 */
function sqlTokens(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const char = text[i]!;
    const next = text[i + 1];
    if (char === "-" && next === "-") {
      const end = text.indexOf("\n", i);
      i = end === -1 ? text.length : end + 1;
    } else if (char === "/" && next === "*") {
      const end = text.indexOf("*/", i + 2);
      i = end === -1 ? text.length : end + 2;
    } else if (char === "'" || char === '"' || char === "`") {
      // A doubled quote is the quote itself ('it''s'); a backslash escapes in some dialects.
      i++;
      while (i < text.length) {
        if (text[i] === "\\" && char === "'") i += 2;
        else if (text[i] === char && text[i + 1] === char) i += 2;
        else if (text[i] === char) break;
        else i++;
      }
      i++;
    } else if (char === "$" && DOLLAR_TAG.test(text.slice(i, i + 64))) {
      const tag = DOLLAR_TAG.exec(text.slice(i, i + 64))![0];
      const end = text.indexOf(tag, i + tag.length);
      i = end === -1 ? text.length : end + tag.length;
    } else if (char === "(" || char === ")" || char === ";") {
      tokens.push({ punct: char, at: i });
      i++;
    } else if (/[A-Za-z_]/.test(char)) {
      const start = i;
      while (i < text.length && /[\w$]/.test(text[i]!)) i++;
      tokens.push({ word: text.slice(start, i).toUpperCase(), at: start });
    } else {
      i++;
    }
  }
  return tokens;
}

/** The words a SQL statement starts with: text that starts otherwise is prose, however it goes on. */
const STATEMENT_START = new Set(["SELECT", "WITH", "INSERT", "UPDATE", "DELETE", "DROP", "TRUNCATE", "ALTER", "CREATE", "MERGE", "REPLACE", "BEGIN", "START", "COMMIT", "SET", "USE", "GRANT", "REVOKE", "EXPLAIN"]);
/** Before UPDATE or DELETE, these make it a clause (FOR UPDATE, ON DELETE CASCADE, DO UPDATE), not a statement of its own. */
const CLAUSE_AFTER = new Set(["FOR", "ON", "DO", "KEY", "NO"]);

type SqlRisk = Omit<RiskFlag, "path">;

/** The risky statements of a text, if it reads as SQL: each kind once. */
export function sqlRisks(text: string): SqlRisk[] {
  if (!/\b(delete|drop|truncate|update)\b/i.test(text)) return [];
  const found = new Map<string, SqlRisk>();
  const tokens = sqlTokens(text);
  let start = 0;
  for (let end = 0; end <= tokens.length; end++) {
    const token = tokens[end];
    if (token && !("punct" in token && token.punct === ";")) continue;
    const statement = tokens.slice(start, end);
    start = end + 1;
    const first = statement[0];
    if (!first || !("word" in first) || !STATEMENT_START.has(first.word)) continue;
    for (const risk of statementRisks(statement, text)) if (!found.has(risk.label)) found.set(risk.label, risk);
  }
  return [...found.values()];
}

function statementRisks(statement: Token[], text: string): SqlRisk[] {
  const risks: SqlRisk[] = [];
  const wordAt = (index: number) => {
    const token = statement[index];
    return token && "word" in token ? token.word : null;
  };
  // The statement's own text from token `from` through `count` tokens, in its own case and spacing.
  const excerpt = (from: number, count: number) => {
    const last = statement[from + count - 1]!;
    return text.slice(statement[from]!.at, last.at + ("word" in last ? last.word.length : 1));
  };
  for (let index = 0; index < statement.length; index++) {
    const word = wordAt(index);
    const clause = CLAUSE_AFTER.has(wordAt(index - 1) ?? "");
    if (word === "DROP" && wordAt(index + 1)) risks.push({ kind: "sql-drop", label: `SQL DROP ${wordAt(index + 1)}`, match: excerpt(index, 2) });
    else if (word === "TRUNCATE") risks.push({ kind: "sql-truncate", label: "SQL TRUNCATE", match: excerpt(index, 1) });
    else if (word === "DELETE" && !clause) {
      const unbounded = !hasWhere(statement, index);
      risks.push({ kind: unbounded ? "sql-no-where" : "sql-delete", label: unbounded ? "SQL DELETE without WHERE" : "SQL DELETE", match: excerpt(index, 1) });
    } else if (word === "UPDATE" && !clause && !hasWhere(statement, index)) {
      risks.push({ kind: "sql-no-where", label: "SQL UPDATE without WHERE", match: excerpt(index, 1) });
    }
  }
  return risks;
}

/** Whether the clause that starts at `from` (up to the bracket that closes around it) has a WHERE of its own. */
function hasWhere(statement: Token[], from: number): boolean {
  let depth = 0;
  for (let index = from + 1; index < statement.length; index++) {
    const token = statement[index]!;
    if ("punct" in token) {
      depth += token.punct === "(" ? 1 : -1;
      if (depth < 0) return false;
    } else if (depth === 0 && token.word === "WHERE") return true;
  }
  return false;
}
