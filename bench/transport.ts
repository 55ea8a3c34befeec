// What the SDK's transport saves the agent: request.begin then request.complete
// sent by the SDK's own transport (sdk/src/transport.ts) and by tRPC's client
// over the same HTTP (undici's `request`), in alternating blocks on one server,
// so that both see the machine as it is.
import { createTRPCUntypedClient, httpLink } from "@trpc/client";
import type { AnyRouter } from "@trpc/server";
import { contractCaller, type Call } from "../sdk/src/transport.ts";
import type { BenchServer } from "./server.ts";
import { undiciFetch } from "./undici-fetch.ts";

const BLOCK = 25;

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
  const samples: TransportSamples = { sdk: [], trpcClient: [] };
  for (let block = 0; block * BLOCK < count; block++) {
    const size = Math.min(BLOCK, count - block * BLOCK);
    const sides = [
      async () => { for (let i = 0; i < size; i++) samples.sdk.push(await pair(viaSdk)); },
      async () => { for (let i = 0; i < size; i++) samples.trpcClient.push(await pair(viaTrpcClient)); },
    ];
    // Which side goes first alternates too.
    for (const side of block % 2 ? sides.reverse() : sides) await side();
  }
  return samples;
}
