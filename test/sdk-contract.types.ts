// Holds the server's router to the SDK's contract (sdk/src/contract.ts) in the
// type check: for every procedure the SDK calls, the server accepts what the
// SDK sends, answers at least what the SDK reads, and agrees on query or
// mutation. A mismatch fails `npm run typecheck`, naming the procedure.
import type { inferRouterInputs, inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "../server/api/router.ts";
import type { Contract, Procedure } from "../sdk/src/contract.ts";

type Inputs = inferRouterInputs<AppRouter>;
type Outputs = inferRouterOutputs<AppRouter>;
type Split<P> = P extends `${infer Router}.${infer Name}` ? [Router, Name] : never;
type Lookup<Tree, P> = Split<P> extends [infer R, infer N] ? (R extends keyof Tree ? (N extends keyof Tree[R] ? Tree[R][N] : never) : never) : never;
type ServerKind<P> = Lookup<AppRouter, P> extends { _def: { type: infer Kind } } ? Kind : never;

type Mismatch<P extends Procedure> = [Lookup<Inputs, P>] extends [never]
  ? `${P}: the server has no such procedure`
  : [Contract[P]["input"]] extends [Lookup<Inputs, P>]
    ? [Lookup<Outputs, P>] extends [Contract[P]["output"]]
      ? [ServerKind<P>] extends [Contract[P]["kind"]]
        ? never
        : `${P}: the server has it as a ${ServerKind<P> & string}`
      : `${P}: the server's answer is not what the SDK reads`
    : `${P}: the server does not accept what the SDK sends`;

type Mismatches = { [P in Procedure]: Mismatch<P> }[Procedure];

export const sdkContractHolds: [Mismatches] extends [never] ? true : Mismatches = true;
