// Room names, in one place so emitters and joiners agree.
export const rooms = {
  workspace: (workspaceId: string) => `workspace:${workspaceId}`,
  session: (sessionId: string) => `session:${sessionId}`,
  /** Every connection opened with one operator session (cookie or token). */
  operatorSession: (sessionId: string) => `operator-session:${sessionId}`,
  /** The connections of one agent key's SDKs: the decisions of the approvals it asked for. */
  agentKey: (agentKeyId: string) => `agent-key:${agentKeyId}`,
};
