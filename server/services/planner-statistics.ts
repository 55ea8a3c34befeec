// The planner's statistics. PostgreSQL's autovacuum analyzes a table once
// enough of it changed; PGlite runs no autovacuum (nor does a server where it
// is turned off), so a table is never analyzed there unless Tollgate does it. The engine's functions
// keep one plan per connection (plan_cache_mode = force_generic_plan, the
// migration 20261125180000_hot_path_generic_plans), made with what the planner
// knew when it first ran them: on an empty database it guesses, and a guessed
// plan can walk a whole table (a request found through the workspace's index,
// say) and stays, call after call, as the table grows. ANALYZE gives the
// planner the tables' real sizes and drops the plans made without them.
import type { PrismaClient } from "../db/client.ts";

/** autovacuum's own defaults: a table is analyzed once 50 rows plus a tenth of it changed since its last ANALYZE. */
export const ANALYZE_THRESHOLD = { rows: 50, fraction: 0.1 } as const;

/**
 * Analyzes every table of the schema with more changes since its last
 * ANALYZE than autovacuum would wait for; one statement.
 */
export async function analyzeChangedTables(prisma: PrismaClient): Promise<void> {
  await prisma.$executeRawUnsafe(`
    DO $$
    DECLARE
      changed regclass;
    BEGIN
      FOR changed IN
        SELECT s.relid::regclass FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
        WHERE s.schemaname = current_schema()
          AND s.n_mod_since_analyze > ${ANALYZE_THRESHOLD.rows} + ${ANALYZE_THRESHOLD.fraction} * greatest(c.reltuples, 0)
        ORDER BY s.relid
      LOOP
        EXECUTE format('ANALYZE %s', changed);
      END LOOP;
    END
    $$`);
}
