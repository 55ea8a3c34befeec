// What makes a call look risky to the person deciding it: the tool's MCP
// annotations and, later in this file, well-known patterns in its arguments.
// Pure: the screen and the inbox show what these functions find.

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
