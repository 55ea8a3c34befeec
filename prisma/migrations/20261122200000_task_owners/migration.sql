-- Tasks created before Task."agentKeyId" existed belong to the key of their
-- first request (the request that created them), so follow-on work keeps
-- working after the upgrade. Tasks without such a request stay unowned (see
-- server/domain/authority.ts).
UPDATE "Task" t SET "agentKeyId" = (
  SELECT r."agentKeyId" FROM "Request" r WHERE r."taskId" = t.id ORDER BY r."createdAt", r.id LIMIT 1
)
WHERE t."agentKeyId" IS NULL;
