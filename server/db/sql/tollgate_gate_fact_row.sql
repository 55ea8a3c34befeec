-- What a gate decision depends on, for one request: the row that
-- tollgate_gate_facts returns, and tollgate_lock_request_for_approval and
-- tollgate_read_request_for_approval with it. `fingerprint` covers the facts
-- that can change between the unlocked read and the write behind the lock
-- (tollgate_open_approval_if_unchanged compares it).
--
-- Locks: none (a type).
CREATE TYPE tollgate_gate_fact_row AS (
  id text,
  session_id text,
  task_id text,
  status "RunStatus",
  agent text,
  key_at_or_above boolean,
  metadata jsonb,
  config jsonb,
  policy_version integer,
  default_timeout_ms integer,
  default_on_timeout text,
  default_route jsonb,
  channel_version integer,
  fingerprint text
);
