// How the console names the agent frameworks tasks come from (request.begin's
// `framework`); a name it does not know is shown as the agent sent it.
const NAMES: Record<string, string> = {
  langgraph: "LangGraph",
  langchain: "LangChain",
  "openai-agents": "OpenAI Agents",
  "ai-sdk": "AI SDK",
  mcp: "MCP",
  a2a: "A2A",
  "claude-agent": "Claude Agent SDK",
  python: "Python",
};

export function frameworkName(framework: string): string {
  return NAMES[framework] ?? framework;
}
