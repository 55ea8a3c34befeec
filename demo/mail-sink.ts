// The demo's mailbox: a local SMTP server that accepts every message Tollgate
// sends, prints who it is for and its link, and keeps it as an .eml file.
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";

const port = Number(process.env.TOLLGATE_DEMO_SMTP_PORT ?? 2525);
const folder = path.join(process.env.TOLLGATE_DATA_DIR ?? "./.data/demo", "mail");
await mkdir(folder, { recursive: true });
let count = 0;

const server = new SMTPServer({
  authOptional: true,
  disabledCommands: ["STARTTLS"],
  logger: false,
  onData(stream, _session, done) {
    const chunks: Buffer[] = [];
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("end", async () => {
      try {
        const raw = Buffer.concat(chunks);
        const mail = await simpleParser(raw);
        const file = path.join(folder, `${String(++count).padStart(4, "0")}.eml`);
        await writeFile(file, raw);
        const to = [mail.to ?? []].flat().flatMap((address) => address.value.map((entry) => entry.address)).join(", ");
        const link = /https?:\/\/\S+\/approvals\/\S+/.exec(mail.text ?? "")?.[0];
        console.log(`mail to ${to}: ${mail.subject}${link ? `\n  open: ${link}` : ""}\n  saved as ${file}`);
        done();
      } catch (error) {
        done(error as Error);
      }
    });
  },
});
server.listen(port, "127.0.0.1", () => console.log(`demo mailbox listening on smtp://127.0.0.1:${port}; messages are printed here and kept in ${folder}`));
process.on("SIGTERM", () => server.close(() => process.exit(0)));
