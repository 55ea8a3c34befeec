// What the SDK's transport saves the agent: request.begin then request.complete
// sent by the SDK's own transport (sdk/src/transport.ts) and by tRPC's client
// over the same HTTP (undici's `request`), interleaved on one server.
import { createTRPCUntypedClient, httpLink } from "@trpc/client";
import type { AnyRouter } from "@trpc/server";
import { contractCaller, type Call } from "../sdk/src/transport.ts";
import type { BenchServer } from "./server.ts";
import { interleaved } from "./interleave.ts";
import { undiciFetch } from "./undici-fetch.ts";

export interface TransportSamples {
  /** Each pair's milliseconds through the SDK's transport. */
  sdk: number[];
  /** Each pair's milliseconds through tRPC's client. */
  trpcClient: number[];
}

export async function transportAgainstTrpcClient(server: BenchServer, count: number): Promise<TransportSamples> {
  const apiUrl = `${server.url}/api/trpc`;
  const client = createTRPCUntypedClient<AnyRouter>({ links: [httpLink({ url: apiUrl, headers: { authorization: `Bearer ${server.agentKey}` }, fetch: undiciFetch })] });
  const viaTrpcClient = ((path, input) => client.mutation(path, input)) as Call;
  const viaSdk = contractCaller(apiUrl, server.agentKey);
  const { sessionId } = await viaSdk("session.open", { title: "bench: transport" });
  const pair = async (call: Call) => {
    const started = performance.now();
    const { requestId } = await call("request.begin", { sessionId, agent: "bench-agent" });
    await call("request.complete", { requestId });
    return performance.now() - started;
  };
  const [sdk, trpcClient] = await interleaved(count, () => pair(viaSdk), () => pair(viaTrpcClient));
  return { sdk, trpcClient };
}
