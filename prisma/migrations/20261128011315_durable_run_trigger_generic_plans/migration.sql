-- The durable run's end-of-request trigger plans like every engine function:
-- once per connection (generic plans), and by index whatever the planner
-- knows of the tables (its UPDATE finds the run by "DurableRun_requestId_idx").
ALTER FUNCTION tollgate_durable_run_request_ended()
  SET plan_cache_mode = force_generic_plan
  SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off;
