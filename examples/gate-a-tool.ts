// The README's TypeScript example, as it is printed there: an agent gates one
// tool call behind a person's decision. Run it against the demo with
//   TOLLGATE_AGENT_KEY=tgk_demo_agent_key_for_local_use npx tsx examples/gate-a-tool.ts
// and decide the "send_email" approval in the console.
import { createTollgate } from "../sdk/src/index.ts";

const tollgate = createTollgate({ url: process.env.TOLLGATE_URL ?? "http://localhost:3000", apiKey: process.env.TOLLGATE_AGENT_KEY! });
const mailer = { send: async (args: { to: string }) => ({ sent: true, to: args.to }) };

const { sessionId } = await tollgate.openSession({ title: "README example" });
const request = await tollgate.begin({ sessionId, agent: "mailer" }); // orchestrators pass parentRequestId: their own requestId
const outcome = await request.gate("send_email", { to: "a@example.com" }, (args) => mailer.send(args as { to: string }));
// outcome: executed (with the approved, possibly edited args), rejected, responded, canceled or claimedElsewhere
await request.complete(outcome);
console.log(outcome.outcome);
tollgate.close();
