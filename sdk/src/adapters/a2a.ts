// A2A (Agent2Agent), on the calling side: an orchestrator sends a message to a
// remote A2A agent, and whenever the agent's task stops in input-required, the
// agent's question goes to a person as a Tollgate question (kind "question",
// the question's text as its summary). The answer goes back as a user message
// on the same task (its task id and context id), which carries on from where it
// stopped, as often as the agent asks.
//
// - The remote agent's work is one Tollgate request (framework "a2a"), begun
//   under the caller's request, so the session's tree shows who is asking.
// - A question's externalId is the A2A task id (`<task id>:2`, `:3`, ... when
//   the same task asks again).
// - A declined question (or one that expired or was canceled) cancels the A2A
//   task: the agent cannot go on without the input, and a refusal sent back as
//   text would read as the answer.
// - Only input-required is a question for a person. Auth-required asks for the
//   remote agent's credentials, which are no operator's to type into a
//   console: such a task comes back to the caller as it stands.
import { Role, TaskState, taskStateToJSON, type Message, type Part, type Task } from "@a2a-js/sdk";
import type { CancelTaskRequest, SendMessageConfiguration, SendMessageRequest } from "@a2a-js/sdk";
import type { ApprovalResult, Json } from "../contract.ts";
import { clip, SUMMARY_CHARS } from "./text.ts";
import type { RequestHandle, Tollgate } from "../index.ts";

/**
 * What the adapter needs of the remote agent: a2a-js's `Client` (from
 * `ClientFactory`) as it is, or a `DefaultRequestHandler` in the same process
 * with its `ServerCallContext` bound.
 */
export interface A2AAgent {
  sendMessage(request: SendMessageRequest): Promise<Message | Task>;
  cancelTask(request: CancelTaskRequest): Promise<Task>;
}

export interface A2AHumanInputOptions {
  tollgate: Tollgate;
  sessionId: string;
  /** The remote agent's name in the console. */
  agent: string;
  /** The caller's request: the remote agent's request is begun under it. */
  parentRequestId?: string;
}

export interface A2AHumanInputResult {
  /** The task as it ended (completed, canceled, ...), or the agent's message when it answered without a task. */
  result: Task | Message;
  /** The remote agent's request in Tollgate. */
  requestId: string;
  /** Questions asked of a person on the way. */
  questions: number;
}

/** How the Tollgate request of the remote agent ends. */
type Ending = { complete: Json } | { fail: { message: string; code: string } };

const isTask = (result: Task | Message): result is Task => !("messageId" in result);

/**
 * Sends `request` to `agent` and waits for the task to end, asking a person
 * each time it stops in input-required. Sends block until the task ends or
 * stops for input (never return while it is still working): the adapter does
 * not poll.
 */
export async function sendWithHumanInput(agent: A2AAgent, request: SendMessageRequest, options: A2AHumanInputOptions): Promise<A2AHumanInputResult> {
  const { tollgate } = options;
  const remote = await tollgate.begin({
    sessionId: options.sessionId,
    agent: options.agent,
    parentRequestId: options.parentRequestId,
    framework: "a2a",
    input: textOf(request.message?.parts ?? []),
  });
  // Only returnImmediately is set: the rest stays the caller's, or the client's defaults.
  const blocking = { ...request, configuration: { ...request.configuration, returnImmediately: false } as SendMessageConfiguration };
  let questions = 0;
  try {
    let result = await agent.sendMessage(blocking);
    while (isTask(result) && result.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED) {
      const task = result;
      questions += 1;
      const answered = await askAndWait(tollgate, remote, task, questions === 1 ? task.id : `${task.id}:${questions}`);
      if (answered.decision?.action !== "respond") {
        const canceled = await agent.cancelTask({ tenant: request.tenant ?? "", id: task.id, metadata: undefined });
        await end(remote, { fail: { message: `${declineOf(answered)}: the A2A task ${task.id} was canceled`, code: "A2A_INPUT_DECLINED" } });
        return { result: canceled, requestId: remote.requestId, questions };
      }
      result = await agent.sendMessage({ ...blocking, message: answerMessage(task, answered) });
    }
    await end(remote, endingOf(result));
    return { result, requestId: remote.requestId, questions };
  } catch (error) {
    await remote.fail({ message: error instanceof Error ? error.message : String(error), code: "A2A_ERROR" }).catch(() => undefined);
    throw error;
  }
}

async function askAndWait(tollgate: Tollgate, remote: RequestHandle, task: Task, externalId: string): Promise<ApprovalResult> {
  const question = task.status?.message;
  const text = textOf(question?.parts ?? []);
  // Structured parts of the question (choices, a form) are shown as its arguments.
  const data = (question?.parts ?? []).flatMap((part) => (part.content?.$case === "data" ? [part.content.value as Json] : []));
  return tollgate.ask({
    requestId: remote.requestId,
    tool: "a2a_input",
    args: { taskId: task.id, contextId: task.contextId, ...(data.length > 0 ? { data } : {}) },
    kind: "question",
    externalId,
    summary: clip(text || `The agent needs input to continue task \`${task.id}\`.`, SUMMARY_CHARS),
  });
}

/** The person's answer as the next user message of the paused task. */
function answerMessage(task: Task, answered: ApprovalResult): Message {
  return {
    // Derived from the approval, so an answer sent again carries the same id.
    messageId: `tollgate-${answered.approvalId}`,
    taskId: task.id,
    contextId: task.contextId,
    role: Role.ROLE_USER,
    parts: [{ content: { $case: "text", value: answered.decision?.message ?? "" }, mediaType: "text/plain", filename: "", metadata: undefined }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

function declineOf(answered: ApprovalResult): string {
  if (answered.status === "CANCELED") return "the question was canceled";
  const said = answered.decision?.message ? `: ${answered.decision.message}` : "";
  return answered.status === "EXPIRED" ? `no answer in time${said}` : `the question was declined${said}`;
}

function endingOf(result: Task | Message): Ending {
  if (!isTask(result)) return { complete: { messageId: result.messageId, contextId: result.contextId, text: textOf(result.parts) } };
  const state = result.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED;
  const outcome = { taskId: result.id, contextId: result.contextId, state: taskStateToJSON(state) };
  if (state === TaskState.TASK_STATE_COMPLETED) return { complete: outcome };
  const said = textOf(result.status?.message?.parts ?? []);
  const ended = [TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_REJECTED, TaskState.TASK_STATE_CANCELED].includes(state);
  const message = ended
    ? `the A2A task ${result.id} ended in ${outcome.state}${said ? `: ${said}` : ""}`
    : `the A2A task ${result.id} stopped in ${outcome.state}, which is not a question for a person; it was returned to the caller as it stands`;
  return { fail: { message, code: outcome.state } };
}

async function end(remote: RequestHandle, ending: Ending): Promise<void> {
  if ("complete" in ending) await remote.complete(ending.complete);
  else await remote.fail(ending.fail);
}

function textOf(parts: Part[]): string {
  return parts
    .flatMap((part) => (part.content?.$case === "text" ? [part.content.value] : []))
    .join("\n\n")
    .trim();
}
