import { describe, expect, it } from "vitest";
import { comparableName, hiddenCharacterIn, mixedScriptsIn } from "./names.ts";

describe("names rules compare", () => {
  // The look-alikes that reached a person instead of a reject rule for "send_email".
  it.each([
    ["upper case", "SEND_Email"],
    ["fullwidth ｓ", "ｓend_email"],
    ["fullwidth throughout", "ｓｅｎｄ＿ｅｍａｉｌ"],
    ["mathematical bold", "𝐬𝐞𝐧𝐝_𝐞𝐦𝐚𝐢𝐥"],
    ["ligature ﬁ", "ﬁle_delete"],
  ])("names: %s compares as the plain name", (_, name) => {
    const plain = name === "ﬁle_delete" ? "file_delete" : "send_email";
    expect(comparableName(name)).toBe(plain);
  });

  it.each([
    ["NFD and NFC", "re\u0301sume\u0301_upload", "résumé_upload"],
    ["ß and SS", "STRASSE", "straße"],
    ["final and medial sigma", "ΟΔΟΣ", "οδος"],
    ["dotted capital I", "İ_tool", "i̇_tool"],
  ])("names: %s compare equal", (_, one, other) => {
    expect(comparableName(one)).toBe(comparableName(other));
  });

  it.each([
    ["a namespace prefix", "mcp/delete_user", "delete_user"],
    ["a trailing dot", "delete_user.", "delete_user"],
    ["a hyphen for an underscore", "delete-user", "delete_user"],
    ["a Cyrillic е", "s\u0435nd_email", "send_email"],
  ])("names: %s stays a different name (rules reach it with a glob)", (_, one, other) => {
    expect(comparableName(one)).not.toBe(comparableName(other));
  });
});

describe("names nobody can see", () => {
  it.each([
    ["a zero-width space", "send_\u200bemail", "U+200B ZERO WIDTH SPACE at position 6"],
    ["a zero-width joiner", "send\u200d_email", "U+200D ZERO WIDTH JOINER at position 5"],
    ["a right-to-left override", "\u202esend_email", "U+202E RIGHT-TO-LEFT OVERRIDE at position 1"],
    ["a bidi isolate", "send\u2066_email", "U+2066 LEFT-TO-RIGHT ISOLATE at position 5"],
    ["a carriage return", "send\r\nBcc: x", "U+000D CARRIAGE RETURN at position 5"],
    ["a line feed", "send\nemail", "U+000A LINE FEED at position 5"],
    ["a soft hyphen", "send\u00ademail", "U+00AD SOFT HYPHEN at position 5"],
    ["a byte order mark", "send\ufeffemail", "U+FEFF ZERO WIDTH NO-BREAK SPACE at position 5"],
    ["a line separator", "send\u2028email", "U+2028 LINE SEPARATOR at position 5"],
    ["a variation selector", "send\ufe0femail", "U+FE0F VARIATION SELECTOR-16 at position 5"],
    ["a Hangul filler", "send\u3164email", "U+3164 HANGUL FILLER at position 5"],
    ["a tag character", "send\u{e0041}", "U+E0041 TAG LATIN CAPITAL LETTER A at position 5"],
    ["a private-use character", "send\ue000", "U+E000 <private-use-E000> at position 5"],
    ["an escape", "send\u001b[2J", "U+001B ESCAPE at position 5"],
  ])("names: %s is named with its position", (_, name, described) => {
    expect(hiddenCharacterIn(name)).toBe(described);
  });

  it.each([["send_email"], ["Send Email"], ["mcp/delete_user"], ["résumé_upload"], ["отправить_почту"], ["メール送信"], ["ｓend"]])(
    "names: %s hides nothing",
    (name) => {
      expect(hiddenCharacterIn(name)).toBeNull();
    },
  );
});

describe("names that mix scripts", () => {
  it.each([
    ["a Cyrillic е among Latin letters", "s\u0435nd_email", "Latin and Cyrillic: U+0435 CYRILLIC SMALL LETTER IE at position 2"],
    ["a Greek ο among Latin letters", "l\u03bfgin", "Latin and Greek: U+03BF GREEK SMALL LETTER OMICRON at position 2"],
    ["Latin after Cyrillic", "\u0441end", "Cyrillic and Latin: U+0065 LATIN SMALL LETTER E at position 2"],
  ])("names: %s is found", (_, name, described) => {
    expect(mixedScriptsIn(name)).toBe(described);
  });

  it.each([
    ["plain ASCII", "send_email-2"],
    ["Latin with accents", "résumé_upload"],
    ["Cyrillic alone, with digits and punctuation", "отправить_почту.2"],
    ["Japanese (Han and kana)", "メール送信ツール"],
    ["Korean (Hangul and Han)", "메일送信"],
    ["fullwidth Latin", "ｓｅｎｄ"],
    ["a decomposed accent", "re\u0301sume\u0301"],
  ])("names: %s is one script", (_, name) => {
    expect(mixedScriptsIn(name)).toBeNull();
  });
});
