// The task-augmented calls a gateway with --run-id is still deciding, noted in
// a small file beside its run's (0600): a gateway started again with the run
// id takes them up under the same task ids, so a client's tasks/get and
// tasks/result go on answering for a task whose approval still waits (the
// call itself finds its approval as any call of a continued run does).
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";

export interface JournaledTask {
  taskId: string;
  name: string;
  arguments: Record<string, unknown>;
  ttl: number | null;
  createdAt: string;
}

export class TaskJournal {
  readonly #file: string;
  /** Writes one at a time, each the whole file: a crash leaves the last one written. */
  #writing: Promise<unknown> = Promise.resolve();

  constructor(file: string) {
    this.#file = file;
  }

  async read(): Promise<JournaledTask[]> {
    try {
      const saved = JSON.parse(await readFile(this.#file, "utf8")) as unknown;
      return Array.isArray(saved) ? saved.filter((task): task is JournaledTask => typeof task?.taskId === "string" && typeof task?.name === "string") : [];
    } catch {
      // None noted (or a file cut short by a crash): nothing to take up.
      return [];
    }
  }

  add(task: JournaledTask): Promise<void> {
    return this.#change((tasks) => [...tasks.filter((noted) => noted.taskId !== task.taskId), task]);
  }

  remove(taskId: string): Promise<void> {
    return this.#change((tasks) => tasks.filter((noted) => noted.taskId !== taskId));
  }

  #change(change: (tasks: JournaledTask[]) => JournaledTask[]): Promise<void> {
    const written = this.#writing.then(async () => {
      const tasks = change(await this.read());
      await mkdir(path.dirname(this.#file), { recursive: true, mode: 0o700 });
      const partial = `${this.#file}.${process.pid}.tmp`;
      await writeFile(partial, JSON.stringify(tasks), { mode: 0o600 });
      await rename(partial, this.#file);
    });
    this.#writing = written.catch(() => undefined);
    return written;
  }
}
