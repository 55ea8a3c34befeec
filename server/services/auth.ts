// Operator login, sessions and script tokens; agent key authentication.
// Passwords are hashed with argon2id; tokens and keys are random and stored as SHA-256.
import { createHash, randomBytes } from "node:crypto";
import { hash as argon2Hash, verify as argon2Verify } from "@node-rs/argon2";
import { agentKeyShape } from "../domain/agent-key-format.ts";
import { DomainError } from "../domain/errors.ts";
import { log } from "../log.ts";
import { newId } from "../domain/ids.ts";
import type { AgentPrincipal, OperatorPrincipal } from "../domain/principal.ts";
import { SYSTEM_ACTOR } from "./audit.ts";
import type { ServiceDeps } from "./deps.ts";
import type { Verified } from "./principal-cache.ts";

export const sha256 = (value: string) => createHash("sha256").update(value).digest("hex");
export const randomToken = (prefix: string) => `${prefix}_${randomBytes(24).toString("base64url")}`;

export const hashPassword = (password: string) => argon2Hash(password);

// A hash to verify against when the email is unknown, so a login takes as long
// whether or not the account exists.
let decoyHash: Promise<string> | undefined;

export interface LoginResult {
  operator: { id: string; email: string; name: string; role: OperatorPrincipal["role"] };
  token: string;
  expiresAt: Date;
  /** The device cookie for this browser: its later logins are throttled on it alone. */
  device: string;
}

export interface LoginClient {
  /** The client's network address, for throttling and the audit log. */
  address?: string;
  /** The device cookie the browser sent, if any. */
  device?: string;
}

export async function login(deps: ServiceDeps, email: string, password: string, client: LoginClient = {}): Promise<LoginResult> {
  const normalized = email.toLowerCase();
  // Before the hash check: a refused guess costs no argon2 verification.
  const attempt = await deps.loginThrottle.reserve(normalized, client.address, client.device);
  const account = await deps.prisma.account.findUnique({
    where: { email: normalized },
    include: { memberships: { where: { disabledAt: null }, orderBy: { createdAt: "asc" } } },
  });
  decoyHash ??= argon2Hash("tollgate-decoy-password");
  const valid = await argon2Verify(account?.passwordHash ?? (await decoyHash), password);
  const operator = account && valid ? await membershipToSignInto(deps, account.memberships) : undefined;
  if (!account || !valid || !operator) {
    const reason = !account ? "unknown_email" : !valid ? "wrong_password" : "disabled";
    await auditFailedLogin(deps, normalized, client.address, reason, account?.id);
    throw new DomainError("UNAUTHORIZED", "email or password is wrong");
  }
  const { device } = await attempt.succeeded();
  const issued = await issueOperatorSession(deps, operator.id, operator.workspaceId, "BROWSER");
  return {
    operator: { id: operator.id, email: operator.email, name: operator.name, role: operator.role },
    ...issued,
    device,
  };
}

type Membership = { id: string; workspaceId: string; email: string; name: string; role: OperatorPrincipal["role"] };

/** The enabled membership signed into most recently, else the oldest: a person lands where they last worked. */
async function membershipToSignInto<M extends Membership>(deps: ServiceDeps, memberships: M[]): Promise<M | undefined> {
  if (memberships.length <= 1) return memberships[0];
  const last = await deps.prisma.operatorSession.findFirst({
    where: { operatorId: { in: memberships.map((membership) => membership.id) }, kind: "BROWSER" },
    orderBy: { createdAt: "desc" },
    select: { operatorId: true },
  });
  return memberships.find((membership) => membership.id === last?.operatorId) ?? memberships[0];
}

/**
 * Records a failed login (never the password) in every workspace the account
 * belongs to, so each one's admins see attempts on their people; an unknown
 * email goes to the server's first workspace.
 */
async function auditFailedLogin(
  deps: ServiceDeps,
  email: string,
  address: string | undefined,
  reason: "unknown_email" | "wrong_password" | "disabled",
  accountId: string | undefined,
): Promise<void> {
  const memberships = accountId
    ? await deps.prisma.operator.findMany({ where: { accountId }, select: { id: true, workspaceId: true } })
    : [];
  const first = memberships.length ? undefined : await deps.prisma.workspace.findFirst({ orderBy: { createdAt: "asc" }, select: { id: true } });
  const targets = first ? [{ id: email, workspaceId: first.id }] : memberships;
  const now = deps.now();
  for (const target of targets) {
    await deps.prisma.$transaction((tx) =>
      deps.audit.append(tx,
        target.workspaceId,
        {
          actor: SYSTEM_ACTOR,
          action: "operator.login_failed",
          subjectType: "operator",
          subjectId: target.id,
          data: { email, address: address ?? null, reason },
        },
        now,
      ),
    );
  }
}

export async function issueOperatorSession(
  deps: ServiceDeps,
  operatorId: string,
  workspaceId: string,
  kind: "BROWSER" | "TOKEN",
  ttlHours = deps.sessionTtlHours,
): Promise<{ token: string; expiresAt: Date }> {
  const now = deps.now();
  const token = randomToken(kind === "BROWSER" ? "tgs" : "tgo");
  const expiresAt = new Date(now.getTime() + ttlHours * 3600_000);
  const operator = await deps.prisma.operator.findUniqueOrThrow({ where: { id: operatorId } });
  await deps.prisma.$transaction(async (tx) => {
    await tx.operatorSession.create({
      data: { id: newId("ops"), workspaceId, operatorId, kind, tokenHash: sha256(token), createdAt: now, expiresAt },
    });
    await deps.audit.append(tx,
      workspaceId,
      {
        actor: { type: "operator", id: operatorId, label: operator.email },
        action: kind === "BROWSER" ? "operator.login" : "operator.token_issued",
        subjectType: "operator",
        subjectId: operatorId,
        data: { expiresAt: expiresAt.toISOString() },
      },
      now,
    );
  });
  return { token, expiresAt };
}

interface SessionOfOperator {
  id: string;
  workspaceId: string;
  operatorId: string;
  expiresAt: Date;
  revokedAt: Date | null;
  email: string;
  name: string;
  role: OperatorPrincipal["role"];
  disabledAt: Date | null;
}

export async function authenticateOperator(deps: ServiceDeps, token: string): Promise<OperatorPrincipal | null> {
  const verified = await deps.operatorSessionCache.fetch(sha256(token));
  const principal = verified?.principal ?? null;
  // A session's own expiry is checked on every answer, remembered ones too.
  return principal && principal.expiresAt > deps.now() ? principal : null;
}

/** The session's principal from the database; null for none valid. */
export async function readOperatorSession(deps: ServiceDeps, tokenHash: string): Promise<Verified<OperatorPrincipal>> {
  // One statement (Prisma would read the session and its operator in two).
  const [session] = await deps.prisma.$queryRaw<SessionOfOperator[]>`
    SELECT s.id, s."workspaceId", s."operatorId", s."expiresAt", s."revokedAt", o.email, o.name, o.role::text AS role, o."disabledAt"
    FROM "OperatorSession" s JOIN "Operator" o ON o.id = s."operatorId"
    WHERE s."tokenHash" = ${tokenHash}`;
  if (!session || session.revokedAt || session.expiresAt <= deps.now() || session.disabledAt) return { principal: null };
  return {
    principal: {
      kind: "operator",
      workspaceId: session.workspaceId,
      operatorId: session.operatorId,
      sessionId: session.id,
      expiresAt: session.expiresAt,
      email: session.email,
      name: session.name,
      role: session.role,
    },
  };
}

export async function logout(deps: ServiceDeps, principal: OperatorPrincipal): Promise<void> {
  await deps.prisma.operatorSession.updateMany({
    where: { id: principal.sessionId, revokedAt: null },
    data: { revokedAt: deps.now() },
  });
  // Live connections opened with this session stop receiving events too.
  deps.bus.publish("operator:session-ended", { workspaceId: principal.workspaceId, sessionId: principal.sessionId });
}

// Agent calls are the hot path: a verified key is remembered briefly
// (principal-cache.ts). A revocation or a change of trust drops the key from
// every node's cache at once (the agent-key:changed event, carried between
// nodes by the event bridge); the cache time bounds it only if that event is lost.
export async function authenticateAgent(deps: ServiceDeps, key: string): Promise<AgentPrincipal | null> {
  // A key of the current format whose checksum does not match was mistyped or made up: no lookup.
  if (agentKeyShape(key) === "corrupt") return null;
  const verified = await deps.agentKeyCache.fetch(sha256(key));
  return verified?.principal ?? null;
}

/** The key's principal from the database; null for an unknown or revoked key. */
export async function readAgentKey(deps: ServiceDeps, keyHash: string): Promise<Verified<AgentPrincipal>> {
  const record = await deps.prisma.agentKey.findUnique({ where: { keyHash } });
  if (!record || record.revokedAt) return { principal: null };
  noteKeyUse(deps, record.id, record.lastUsedAt);
  return {
    principal: {
      kind: "agent",
      workspaceId: record.workspaceId,
      agentKeyId: record.id,
      keyName: record.name,
      trustedAgents: Object.freeze([...record.trustedAgents]),
    },
  };
}

/** Last use is kept to the minute; the write is off the call's path and at most once a minute per key. */
const LAST_USE_RESOLUTION_MS = 60_000;

function noteKeyUse(deps: ServiceDeps, keyId: string, lastUsedAt: Date | null): void {
  const now = deps.now();
  if (lastUsedAt && now.getTime() - lastUsedAt.getTime() < LAST_USE_RESOLUTION_MS) return;
  const stale = new Date(now.getTime() - LAST_USE_RESOLUTION_MS);
  deps.prisma.agentKey
    .updateMany({ where: { id: keyId, OR: [{ lastUsedAt: null }, { lastUsedAt: { lt: stale } }] }, data: { lastUsedAt: now } })
    .catch((error: unknown) => log.warn(`could not record the last use of agent key ${keyId}`, error));
}

