// The documentation holds together: every relative link and image points at a
// file of the repository (and at a heading there, when it names one), and every
// code block says whether it runs (a test runs it) or only illustrates.
import { access } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { codeBlocks, documentationPages, headingAnchors, readPage, relativeLinks, REPOSITORY } from "./docs.ts";

/** Which test runs the runnable blocks of each language on each page. */
const RUNNERS: { page: RegExp; language: string; runner: string }[] = [
  { page: /^README\.md$/, language: "ts", runner: "test/readme-example.test.ts" },
  { page: /^sdk\/README\.md$/, language: "js", runner: "test/sdk-package.test.ts" },
  { page: /^(README\.md|docs\/.*\.md)$/, language: "sh", runner: "test/docs-examples.test.ts" },
];

describe("documentation", () => {
  it("docs: every relative link and image of README.md, sdk/README.md and docs/*.md resolves, anchors included", async () => {
    const broken: string[] = [];
    for (const page of await documentationPages()) {
      for (const link of relativeLinks(await readPage(page))) {
        const [file, anchor] = link.split("#") as [string, string | undefined];
        const target = file === "" ? page : path.join(path.dirname(page), decodeURIComponent(file));
        const exists = await access(path.join(REPOSITORY, target)).then(
          () => true,
          () => false,
        );
        if (!exists) broken.push(`${page}: ${link} (no ${target})`);
        else if (anchor && target.endsWith(".md") && !headingAnchors(await readPage(target)).has(anchor)) broken.push(`${page}: ${link} (no heading #${anchor} in ${target})`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("docs: every code block is marked runnable or illustrative, and a test runs each runnable one", async () => {
    const wrong: string[] = [];
    for (const page of await documentationPages()) {
      for (const block of codeBlocks(page, await readPage(page))) {
        const where = `${page}:${block.line} (${block.language || "no language"})`;
        if (block.mark !== "runnable" && block.mark !== "illustrative") wrong.push(`${where}: marked ${block.mark ?? "nothing"}`);
        else if (block.mark === "runnable" && !RUNNERS.some((runner) => runner.page.test(page) && runner.language === block.language)) wrong.push(`${where}: runnable, but no test runs it`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it("docs: the link checker finds a broken link, a missing heading and an unmarked block", () => {
    expect(relativeLinks("[a](docs/nowhere.md) `[b](x.md)` [c](https://example.com)\n```sh runnable\n[d](inside.md)\n```\n")).toEqual(["docs/nowhere.md"]);
    expect(headingAnchors("# Put Tollgate in front of any MCP server\n## Routing, escalation, reminders\n## `runId`: crash-safe\n## Routing, escalation, reminders")).toEqual(
      new Set(["put-tollgate-in-front-of-any-mcp-server", "routing-escalation-reminders", "runid-crash-safe", "routing-escalation-reminders-1"]),
    );
    expect(codeBlocks("x.md", "```sh\nls\n```\n  ```ts illustrative\n  a\n  ```\n").map(({ language, mark, text }) => ({ language, mark, text }))).toEqual([
      { language: "sh", mark: undefined, text: "ls\n" },
      { language: "ts", mark: "illustrative", text: "a\n" },
    ]);
  });
});
