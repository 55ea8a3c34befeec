// An agent run as its own process, for the durable-run tests: started with a
// script and its environment, watched line by line, killed the hard way.
import { spawn, type ChildProcess } from "node:child_process";

export interface AgentProcess {
  /** Resolves with the first line of output that matches (seen already or still to come). */
  line(pattern: RegExp): Promise<string>;
  /** Resolves with the exit code once the process has ended. */
  exited: Promise<number | null>;
  kill(): Promise<void>;
  output(): string;
}

export function startAgent(script: string, env: Record<string, string>): AgentProcess {
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", script], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const watchers = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    output += chunk;
    for (const watcher of [...watchers]) watcher();
  };
  child.stdout!.on("data", onData);
  child.stderr!.on("data", onData);
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return {
    exited,
    output: () => output,
    line(pattern) {
      return new Promise((resolve, reject) => {
        const look = () => {
          const found = output.split("\n").find((line) => pattern.test(line));
          if (found === undefined) return false;
          watchers.delete(look);
          resolve(found);
          return true;
        };
        if (look()) return;
        watchers.add(look);
        void exited.then(() => {
          if (watchers.delete(look) && !look()) reject(new Error(`the agent exited without printing ${pattern}:\n${output}`));
        });
      });
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
}
