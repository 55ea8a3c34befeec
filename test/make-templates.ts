// Makes the migrated template databases the test files copy (templates.ts):
// the embedded one, and PostgreSQL's in the PostgreSQL pass. Prints the
// embedded template's folder, which `npm test` copies for the browser tests'
// server rather than have it create and migrate a database of its own.
import { embeddedTemplate, postgresTemplate } from "./templates.ts";

console.log(`embedded template: ${(await embeddedTemplate()).folder}`);
if (process.env.TOLLGATE_TEST_TARGET === "postgres" && process.env.TEST_DATABASE_URL) {
  await postgresTemplate(process.env.TEST_DATABASE_URL);
}
