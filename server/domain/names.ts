// Tool and agent names as rules see them. Rules compare one form of a name
// (NFKC, case-folded), so upper case, fullwidth letters or a decomposed accent
// cannot carry a call past a rule written for the plain name. What cannot be
// seen is refused outright (zero-width and bidi characters, CR/LF and other
// controls), and so is a name whose letters mix scripts (a Cyrillic "е" among
// Latin ones) unless the workspace allows it. Names that differ visibly stay
// different ("mcp/delete_user", "delete_user."): rules reach them with globs.
import { getScript } from "unicode-properties";
import { unicodeReadableName } from "unicode-name";
import { DomainError } from "./errors.ts";

/** Printable ASCII: nothing hidden, one script, and NFKC leaves it as it is. */
const PLAIN_ASCII = /^[\x20-\x7e]*$/;

/**
 * Characters nobody sees in a name: controls (CR, LF, NUL...), format
 * characters (zero-width, bidi overrides and isolates, soft hyphen, BOM), line
 * and paragraph separators, the other default-ignorable ones (variation
 * selectors, Hangul fillers), private-use characters and unassigned ones.
 */
const HIDDEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\p{Co}\p{Cn}]/u;

/** The form rules compare: NFKC with full case folding (ß and ss, ς and σ alike). */
export function comparableName(name: string): string {
  if (PLAIN_ASCII.test(name)) return name.toLowerCase();
  // Upper then lower case folds what lower case alone leaves apart (ß/SS, ς/σ, ǅ/ǆ);
  // NFKC again recomposes what folding decomposed (İ).
  return name.normalize("NFKC").toUpperCase().toLowerCase().normalize("NFKC");
}

/** "U+200B ZERO WIDTH SPACE" */
export function describeCharacter(character: string): string {
  const codePoint = character.codePointAt(0)!;
  const hex = codePoint.toString(16).toUpperCase().padStart(4, "0");
  const name = unicodeReadableName(character);
  return name ? `U+${hex} ${name}` : `U+${hex}`;
}

/** The first character nobody would see, with its 1-based position: "U+200B ZERO WIDTH SPACE at position 6". */
export function hiddenCharacterIn(name: string): string | null {
  if (PLAIN_ASCII.test(name)) return null;
  let position = 0;
  for (const character of name) {
    position += 1;
    if (HIDDEN.test(character)) return `${describeCharacter(character)} at position ${position}`;
  }
  return null;
}

// Scripts written together in one language count as one (Unicode's UTS #39
// "augmented script sets"): Japanese mixes Han and kana, Korean Han and Hangul.
const AUGMENTED: Record<string, readonly string[]> = {
  Han: ["Han", "Japanese", "Korean", "Han with Bopomofo"],
  Hiragana: ["Hiragana", "Japanese"],
  Katakana: ["Katakana", "Japanese"],
  Hangul: ["Hangul", "Korean"],
  Bopomofo: ["Bopomofo", "Han with Bopomofo"],
};
const SHARED_BY_EVERY_SCRIPT = new Set(["Common", "Inherited", "Unknown"]);

/**
 * Where a name's letters stop being of one script: the scripts met so far and
 * the first character of another ("Latin and Cyrillic: U+0435 CYRILLIC SMALL
 * LETTER IE at position 2"), or null for a name in one script. Digits,
 * punctuation and combining marks belong to every script.
 */
export function mixedScriptsIn(name: string): string | null {
  if (PLAIN_ASCII.test(name)) return null;
  let possible: Set<string> | null = null;
  const seen: string[] = [];
  let position = 0;
  for (const character of name.normalize("NFKC")) {
    position += 1;
    const script = getScript(character.codePointAt(0)!);
    if (SHARED_BY_EVERY_SCRIPT.has(script)) continue;
    const sets = AUGMENTED[script] ?? [script];
    const remaining: Set<string> = possible === null ? new Set(sets) : new Set(sets.filter((set) => possible!.has(set)));
    if (remaining.size === 0) return `${[...seen, script].join(" and ")}: ${describeCharacter(character)} at position ${position}`;
    if (!seen.includes(script)) seen.push(script);
    possible = remaining;
  }
  return null;
}

/** What is wrong with a name that hides a character, said for its field: "contains U+200B ZERO WIDTH SPACE at position 6, …". */
export function hiddenCharacterProblem(name: string): string | null {
  const hidden = hiddenCharacterIn(name);
  return hidden && `contains ${hidden}, which cannot be seen; names may hold no invisible or control characters`;
}

export function mixedScriptsError(field: string, name: string, mixed: string): DomainError {
  return new DomainError(
    "BAD_INPUT",
    `${field} "${name}" mixes scripts (${mixed}), as look-alike names do; use one script, or an admin can allow mixed scripts in the workspace's settings`,
    { field },
  );
}
