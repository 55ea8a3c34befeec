// The documentation's pages as the tests read them: their code blocks (with
// the runnable / illustrative mark after the language) and their links.
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";

export const REPOSITORY = path.resolve(import.meta.dirname, "..");

/** The pages whose examples are marked and whose links must resolve. */
export async function documentationPages(): Promise<string[]> {
  const docs = (await readdir(path.join(REPOSITORY, "docs"))).filter((name) => name.endsWith(".md")).map((name) => `docs/${name}`);
  return ["README.md", "sdk/README.md", ...docs.sort()];
}

export type CodeBlock = { page: string; line: number; language: string; mark: string | undefined; text: string };

/** Every fenced block of a page: the info string's first word is the language, its second the mark. */
export function codeBlocks(page: string, markdown: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  const lines = markdown.split("\n");
  for (let index = 0; index < lines.length; index++) {
    const opening = /^([ \t]*)(```+)(.*)$/.exec(lines[index]!);
    if (!opening) continue;
    const [, indent, fence, info] = opening;
    const [language = "", mark] = info!.trim().split(/\s+/);
    const body: string[] = [];
    let end = index + 1;
    while (end < lines.length && !lines[end]!.startsWith(`${indent}${fence}`)) body.push(lines[end++]!.slice(indent!.length));
    blocks.push({ page, line: index + 1, language, mark, text: body.join("\n") + "\n" });
    index = end;
  }
  return blocks;
}

export async function readPage(page: string): Promise<string> {
  return readFile(path.join(REPOSITORY, page), "utf8");
}

/** The page's text without its code: links and headings are read from this. */
export function prose(markdown: string): string {
  return markdown
    .replace(/^([ \t]*)(```+)[^\n]*\n[\s\S]*?^\1\2[^\n]*$/gm, "")
    .replace(/`[^`\n]*`/g, "");
}

/** GitHub's anchor for each heading of a page (lower case, punctuation dropped, spaces as hyphens, repeats numbered). */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const withoutCode = markdown.replace(/^([ \t]*)(```+)[^\n]*\n[\s\S]*?^\1\2[^\n]*$/gm, "");
  for (const [, heading] of withoutCode.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = heading!
      .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** Every link and image of a page's prose that points inside the repository. */
export function relativeLinks(markdown: string): string[] {
  const targets = [...prose(markdown).matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((match) => match[1]!);
  return targets.filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}
