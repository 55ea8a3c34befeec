// The whole tRPC API. AppRouter is the type the console and the SDK are built against.
import { approvalRouter } from "./routers/approval.ts";
import { agentKeyRouter, operatorRouter } from "./routers/admin.ts";
import { auditRouter } from "./routers/audit.ts";
import { authRouter } from "./routers/auth.ts";
import { notificationRouter } from "./routers/notification.ts";
import { policyRouter } from "./routers/policy.ts";
import { receiptsRouter } from "./routers/receipts.ts";
import { requestRouter } from "./routers/request.ts";
import { runRouter } from "./routers/run.ts";
import { sessionRouter } from "./routers/session.ts";
import { stateRouter } from "./routers/state.ts";
import { taskRouter } from "./routers/task.ts";
import { contextRouter, continuityRouter, threadRouter } from "./routers/thread.ts";
import { workspaceRouter } from "./routers/workspace.ts";
import { router } from "./trpc.ts";

export const appRouter = router({
  auth: authRouter,
  session: sessionRouter,
  request: requestRouter,
  run: runRouter,
  approval: approvalRouter,
  task: taskRouter,
  audit: auditRouter,
  operator: operatorRouter,
  agentKey: agentKeyRouter,
  policy: policyRouter,
  notification: notificationRouter,
  thread: threadRouter,
  state: stateRouter,
  continuity: continuityRouter,
  context: contextRouter,
  receipts: receiptsRouter,
  workspace: workspaceRouter,
});

export type AppRouter = typeof appRouter;
