// The subset of JSONPath that rules and risk flags use, in a module of its own:
// the console imports it (through risk.ts) without the policy engine's
// dependencies, which would otherwise come with it into the browser bundle.
import { DomainError } from "./errors.ts";

export type PathSegment = string | number;

const SEGMENT = /^(?:\.([A-Za-z_$][\w$-]*)|\[(\d+)\]|\[(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)')\])/;

/**
 * Parses the subset of JSONPath rules use: `$`, `.name`, `[0]`, `["any key"]`.
 * Wildcards and filters are refused, so a rule always names one value.
 */
export function parseJsonPath(path: string): PathSegment[] {
  if (!path.startsWith("$")) throw new DomainError("BAD_INPUT", `path "${path}" must start with $ (for example $.amount or $.items[0].price)`);
  const segments: PathSegment[] = [];
  let rest = path.slice(1);
  while (rest.length > 0) {
    const found = SEGMENT.exec(rest);
    if (!found) {
      throw new DomainError(
        "BAD_INPUT",
        `path "${path}" cannot be read at "${rest}": use .name, [index] or ["key"] (wildcards and filters are not supported)`,
      );
    }
    const [whole, name, index, doubleQuoted, singleQuoted] = found;
    if (name !== undefined) segments.push(name);
    else if (index !== undefined) segments.push(Number(index));
    else segments.push((doubleQuoted ?? singleQuoted)!.replace(/\\(.)/g, "$1"));
    rest = rest.slice(whole.length);
  }
  return segments;
}
