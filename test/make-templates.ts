// Makes the migrated template databases the test files copy (templates.ts):
// the embedded one, and PostgreSQL's in the PostgreSQL pass.
import { embeddedTemplate, postgresTemplate } from "./templates.ts";

await embeddedTemplate();
if (process.env.TOLLGATE_TEST_TARGET === "postgres" && process.env.TEST_DATABASE_URL) {
  await postgresTemplate(process.env.TEST_DATABASE_URL);
}
