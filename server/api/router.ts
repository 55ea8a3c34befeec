// The whole tRPC API. AppRouter is the type the console and the SDK are built against.
import { authRouter } from "./routers/auth.ts";
import { sessionRouter } from "./routers/session.ts";
import { router } from "./trpc.ts";

export const appRouter = router({
  auth: authRouter,
  session: sessionRouter,
});

export type AppRouter = typeof appRouter;
