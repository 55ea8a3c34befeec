-- Every engine function's statements look rows up by key (a request by its id,
-- a call chain by its parents, a task's requests by its id), and each keeps one
-- plan per connection (20261125180000_hot_path_generic_plans). That plan is made
-- with what the planner knows of the tables the first time it runs: on a new
-- database, or on PGlite, which has no autovacuum to collect statistics, it
-- guesses at ten pages a table, and its guess (a sequential scan, a hash join
-- over a whole table, a request found through the workspace's index) stayed,
-- call after call, while the tables grew: with 4,500 requests an embedded
-- round trip took 81 ms instead of 19. Sequential scans, hash joins and merge
-- joins are therefore off inside these functions, so their plans look rows up
-- by index whatever the planner knows; server/services/planner-statistics.ts keeps
-- the statistics current where no autovacuum does (PGlite), for the planner's
-- other choices (which index).
--
-- A function created or replaced later must say these settings itself
-- (CREATE OR REPLACE drops them); test/one-round-trip.test.ts checks that
-- every one does.
DO $$
DECLARE
  engine_function regprocedure;
BEGIN
  FOR engine_function IN
    SELECT p.oid::regprocedure FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
    WHERE p.proname LIKE 'tollgate\_%' AND l.lanname = 'plpgsql'
  LOOP
    EXECUTE format('ALTER FUNCTION %s SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off', engine_function);
  END LOOP;
END
$$;
