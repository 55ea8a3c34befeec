// Who is calling: an operator (browser session or script token) or an agent key.
// Every service call is scoped by the principal's workspace.

export type OperatorRoleName = "ADMIN" | "OPERATOR" | "VIEWER";

export interface OperatorPrincipal {
  kind: "operator";
  workspaceId: string;
  operatorId: string;
  sessionId: string;
  /** When the session (cookie or token) stops being valid. */
  expiresAt: Date;
  email: string;
  name: string;
  role: OperatorRoleName;
}

export interface AgentPrincipal {
  kind: "agent";
  workspaceId: string;
  agentKeyId: string;
  keyName: string;
  /** Agent-name globs whose work this key may act on besides its own (set by an admin). */
  trustedAgents: readonly string[];
}

export type Principal = OperatorPrincipal | AgentPrincipal;

/** Viewers watch; operators and admins decide. */
export function canDecide(role: OperatorRoleName): boolean {
  return role === "ADMIN" || role === "OPERATOR";
}
