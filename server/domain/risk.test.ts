import { describe, expect, it } from "vitest";
import { excerptOf, isDestructiveHint, pathOf, riskFlags, sqlRisks } from "./risk.ts";

describe("sqlRisks", () => {
  it.each([
    ["DELETE FROM drafts WHERE status = 'draft'", ["SQL DELETE"]],
    ["delete from drafts", ["SQL DELETE without WHERE"]],
    ["DELETE FROM t WHERE id IN (SELECT id FROM u)", ["SQL DELETE"]],
    ["DELETE FROM t USING (SELECT id FROM u WHERE x) v", ["SQL DELETE without WHERE"]],
    ["UPDATE accounts SET balance = 0", ["SQL UPDATE without WHERE"]],
    ["UPDATE accounts SET balance = 0 WHERE id = 7", []],
    ["DROP TABLE users", ["SQL DROP TABLE"]],
    ["  -- cleanup\n  TRUNCATE audit_log", ["SQL TRUNCATE"]],
    ["SELECT 1; DROP DATABASE prod;", ["SQL DROP DATABASE"]],
    ["WITH gone AS (DELETE FROM drafts RETURNING id) SELECT count(*) FROM gone", ["SQL DELETE without WHERE"]],
    ["WITH gone AS (DELETE FROM drafts WHERE old RETURNING id) SELECT count(*) FROM gone", ["SQL DELETE"]],
    ["DELETE FROM a WHERE x; DELETE FROM b", ["SQL DELETE", "SQL DELETE without WHERE"]],
    // A WHERE in a string or a comment bounds nothing.
    ["DELETE FROM notes /* WHERE id = 1 */", ["SQL DELETE without WHERE"]],
    ["UPDATE t SET note = 'where it was'", ["SQL UPDATE without WHERE"]],
    ["DELETE FROM t -- WHERE id = 1", ["SQL DELETE without WHERE"]],
    ["UPDATE t SET body = $$ WHERE $$", ["SQL UPDATE without WHERE"]],
    // Keywords in quotes, clauses named UPDATE, and prose are not statements.
    ["SELECT 'DROP TABLE x', \"delete\" FROM t", []],
    ["SELECT * FROM t FOR UPDATE", []],
    ["INSERT INTO t VALUES (1) ON CONFLICT (id) DO UPDATE SET v = 2", []],
    ["CREATE TABLE c (p int REFERENCES p ON DELETE CASCADE ON UPDATE CASCADE)", []],
    ["Please delete from the list anyone who asked to be removed.", []],
    ["Hi team, we will drop the old table next week.", []],
    ["", []],
  ])("%j", (text, labels) => {
    expect(sqlRisks(text).map((risk) => risk.label)).toEqual(labels);
  });

  it("the match is the statement's own text, in its own case", () => {
    expect(sqlRisks("select 1;\n  drop   table users")).toEqual([{ kind: "sql-drop", label: "SQL DROP TABLE", match: "drop   table" }]);
  });
});

describe("riskFlags", () => {
  const none = riskFlags({ to: "a@example.com", subject: "hello" }, null, null);

  it.each([
    ["dryRun false", { dryRun: false }, [["dry-run-off", "$.dryRun"]]],
    ["dry_run 'false' nested", { options: { dry_run: "false" } }, [["dry-run-off", "$.options.dry_run"]]],
    ["dryRun true", { dryRun: true }, []],
    ["a statement in an array", { statements: ["SELECT 1", "TRUNCATE t"] }, [["sql-truncate", "$.statements[1]"]]],
    ["an odd key", { "the query": "DELETE FROM t" }, [["sql-no-where", '$["the query"]']]],
    ["a bare string", "DROP TABLE t", [["sql-drop", "$"]]],
  ])("%s", (_name, args, flags) => {
    expect(riskFlags(args, null, null).map((flag) => [flag.kind, flag.path])).toEqual(flags);
  });

  it("nothing flagged is an empty list (the screen says that is not a judgement of safety)", () => {
    expect(none).toEqual([]);
  });

  it("a rule's label marks each of its paths found in the arguments, or the call as a whole when none is", () => {
    const args = { table: "customers", where: null, rows: [{ id: 1 }] };
    expect(riskFlags(args, null, { label: "deletes customer data", paths: ["$.table", "$.rows[0].id", "$.missing"] })).toEqual([
      { kind: "rule", label: "deletes customer data", path: "$.table", excerpt: "customers" },
      { kind: "rule", label: "deletes customer data", path: "$.rows[0].id", excerpt: "1" },
    ]);
    expect(riskFlags(args, null, { label: "deletes customer data", paths: [] })).toEqual([{ kind: "rule", label: "deletes customer data", path: null }]);
    expect(riskFlags(args, null, { label: null, paths: ["$.table"] })).toEqual([{ kind: "rule", label: "flagged by the rule", path: "$.table", excerpt: "customers" }]);
    expect(riskFlags(args, null, { label: null, paths: [] })).toEqual([]);
  });

  it.each([
    [{}, true],
    [{ title: "Run SQL" }, true],
    [{ destructiveHint: true }, true],
    [{ destructiveHint: false }, false],
    [{ readOnlyHint: true }, false],
    [{ readOnlyHint: false }, true],
    [{ readOnlyHint: true, destructiveHint: true }, true],
  ])("annotations %j: destructive %s (a missing hint is MCP's default)", (annotations, destructive) => {
    expect(isDestructiveHint(annotations)).toBe(destructive);
    expect(riskFlags({}, annotations, null).some((flag) => flag.kind === "destructive-hint")).toBe(destructive);
  });

  it("annotations only add: a read-only hint leaves a DELETE flagged", () => {
    expect(riskFlags({ query: "DELETE FROM t" }, { readOnlyHint: true, destructiveHint: false }, null).map((flag) => flag.label)).toEqual(["SQL DELETE without WHERE"]);
  });

  it("the excerpt is the line of a long statement that holds the match, cut short", () => {
    const query = ["-- purge drafts only (ticket 4711)", "SELECT 1;", "DELETE FROM documents", "WHERE status IN ('draft', 'pending_review', 'disputed');", "x".repeat(300)].join("\n");
    expect(riskFlags({ query }, null, null)).toEqual([{ kind: "sql-delete", label: "SQL DELETE", path: "$.query", match: "DELETE", excerpt: "DELETE FROM documents" }]);
    expect(excerptOf("y".repeat(300))).toHaveLength(160);
    expect(excerptOf({ a: [1, 2] })).toBe('{"a":[1,2]}');
  });

  it("paths read back as rules write them", () => {
    expect(pathOf(["a", 0, "b c", 'q"'])).toBe('$.a[0]["b c"]["q\\""]');
  });
});
