// Makes the run's migrated template databases once, before the test files
// start side by side and would each make their own (templates.ts). In a child
// process: the server's database code needs Node's own module loader, which
// vitest's main process does not give its global setup.
import { execFile } from "node:child_process";
import { promisify } from "node:util";

export default async function setup(): Promise<void> {
  try {
    await promisify(execFile)(process.execPath, ["--import", "tsx", "test/make-templates.ts"], { env: process.env });
  } catch (error) {
    const { stderr, stdout } = error as { stderr?: string; stdout?: string };
    throw new Error(`could not make the test template databases:\n${stderr || stdout || String(error)}`);
  }
}
