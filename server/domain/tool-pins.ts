// Pinned tools and the MCP hints a rule may rely on. An MCP server describes
// its tools itself (name, description, annotations, input schema) and may
// change them at any time, so a rule trusts a description only once an admin
// has pinned it, by the hash of the whole definition: a changed tool is not
// the pinned one. Pure.
import { createHash } from "node:crypto";
import canonicalize from "canonicalize";
import type { ToolAnnotations } from "./risk.ts";

/** A tool as an MCP server's tools/list gives it (the parts a pin covers). */
export interface ToolDefinition {
  name: string;
  description?: string;
  annotations?: ToolAnnotations;
  inputSchema?: unknown;
}

import { HINTS, type Hint, type HintMatch } from "./tool-hints.ts";
export { HINTS, type Hint, type HintMatch };

/** What MCP says a client must assume when a server gives no hint: the riskier value of each. */
export const MCP_HINT_DEFAULTS: Record<Hint, boolean> = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true };

/** Hex SHA-256 of the definition in RFC 8785 canonical JSON (absent parts left out, key order irrelevant). */
export function toolDefinitionSha256(definition: ToolDefinition): string {
  const { name, description, annotations, inputSchema } = definition;
  const covered = { name, ...(description !== undefined && { description }), ...(annotations !== undefined && { annotations }), ...(inputSchema !== undefined && { inputSchema }) };
  return createHash("sha256").update(canonicalize(covered) ?? "").digest("hex");
}

/** The hint as a rule sees it: the server's value, or MCP's default where it said nothing. */
export function hintOf(annotations: ToolAnnotations | null | undefined, hint: Hint): boolean {
  return annotations?.[hint] ?? MCP_HINT_DEFAULTS[hint];
}

/**
 * The hints of a rule that claim a tool is safe (read-only, not destructive,
 * idempotent, closed world): the values a server could claim to get through.
 * A rule may rely on them only for pinned tools.
 */
export function safetyClaims(match: HintMatch): Hint[] {
  return HINTS.filter((hint) => match[hint] !== undefined && match[hint] !== MCP_HINT_DEFAULTS[hint]);
}
