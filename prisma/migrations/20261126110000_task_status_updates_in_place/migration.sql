-- A task's status changes twice in every round trip (PAUSED when its request
-- asks, RUNNING when the decision lands). With status in an index, every such
-- update wrote a new entry into each of the task's indexes; without it,
-- PostgreSQL updates the row in place on its page (a HOT update) and touches
-- no index. No query looks tasks up by workspace and status: the console
-- counts a session's tasks by status through the session's index.
DROP INDEX "Task_workspaceId_status_idx";
