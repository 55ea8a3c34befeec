// What an announcement says, for each kind of channel: one approval, or a
// digest of several. Pure: the deliverer fills in the facts and sends.

export type AnnouncementReason = "REQUESTED" | "ESCALATED" | "EXPIRING";

/** One approval as an announcement tells it. */
export interface Announced {
  approvalId: string;
  reason: AnnouncementReason;
  tool: string;
  agent: string;
  summary: string | null;
  args: unknown;
  expiresAt: Date | null;
  /** Who is asked, in words ("operators", "ada@example.com, group finance"). */
  askedOf: string;
  /** The approval in the console; opening it logs in first when needed. */
  link: string;
}

const MAX_ARGUMENTS = 8;
const MAX_VALUE_CHARS = 200;

/** The arguments worth showing in a message: the first top-level fields, each cut short. */
export function keyArguments(args: unknown): Array<[string, string]> {
  const shorten = (value: unknown) => {
    const text = typeof value === "string" ? value : JSON.stringify(value) ?? "null";
    return text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS - 1)}…` : text;
  };
  if (args === null || typeof args !== "object" || Array.isArray(args)) return [["arguments", shorten(args)]];
  const entries = Object.entries(args as Record<string, unknown>);
  const shown: Array<[string, string]> = entries.slice(0, MAX_ARGUMENTS).map(([key, value]) => [key, shorten(value)]);
  if (entries.length > MAX_ARGUMENTS) shown.push(["…", `${entries.length - MAX_ARGUMENTS} more in the console`]);
  return shown;
}

const HEADLINE: Record<AnnouncementReason, string> = {
  REQUESTED: "Approval needed",
  ESCALATED: "Escalated: approval still needed",
  EXPIRING: "Expiring soon: approval still needed",
};

export function headline(item: Announced): string {
  return `${HEADLINE[item.reason]}: ${item.tool} by ${item.agent}`;
}

function expiryText(expiresAt: Date | null): string {
  return expiresAt ? `expires ${expiresAt.toISOString().replace("T", " ").slice(0, 16)} UTC` : "no expiry";
}

export interface EmailMessage {
  subject: string;
  text: string;
  html: string;
}

const HTML_ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => HTML_ESCAPES[character]!);
}

function itemText(item: Announced): string {
  const lines = [
    headline(item),
    item.summary ? `Why: ${item.summary}` : null,
    ...keyArguments(item.args).map(([key, value]) => `  ${key}: ${value}`),
    `Asked of: ${item.askedOf}; ${expiryText(item.expiresAt)}`,
    `Decide: ${item.link}`,
  ];
  return lines.filter((line) => line !== null).join("\n");
}

function itemHtml(item: Announced): string {
  const rows = keyArguments(item.args)
    .map(([key, value]) => `<tr><td style="padding:2px 12px 2px 0;color:#555">${escapeHtml(key)}</td><td style="padding:2px 0;font-family:monospace">${escapeHtml(value)}</td></tr>`)
    .join("");
  return [
    `<h2 style="font-size:16px;margin:16px 0 4px">${escapeHtml(headline(item))}</h2>`,
    item.summary ? `<p style="margin:4px 0">${escapeHtml(item.summary)}</p>` : "",
    `<table style="border-collapse:collapse;font-size:14px">${rows}</table>`,
    `<p style="margin:4px 0;color:#555">Asked of ${escapeHtml(item.askedOf)}; ${escapeHtml(expiryText(item.expiresAt))}</p>`,
    `<p style="margin:8px 0"><a href="${escapeHtml(item.link)}">Open in Tollgate to decide</a></p>`,
  ].join("");
}

/** An email for one approval, or a digest of several: a plain-text and an HTML part with the same content. */
export function emailMessage(items: Announced[]): EmailMessage {
  const [first] = items;
  if (!first) throw new Error("an email announces at least one approval");
  const single = items.length === 1;
  const subject = single ? `${headline(first)} (${expiryText(first.expiresAt)})` : `${items.length} approvals need a decision`;
  const intro = single ? "" : `${items.length} approvals are waiting for a decision:\n\n`;
  const footer = "\n\nDecisions are taken in the console after you log in; nothing is decided by opening a link.";
  return {
    subject,
    text: `${intro}${items.map(itemText).join("\n\n")}${footer}`,
    html: `<div style="font-family:system-ui,sans-serif;color:#111">${single ? "" : `<p>${items.length} approvals are waiting for a decision:</p>`}${items.map(itemHtml).join("<hr style=\"border:0;border-top:1px solid #ddd\">")}<p style="color:#777;font-size:12px">Decisions are taken in the console after you log in; nothing is decided by opening a link.</p></div>`,
  };
}

const SLACK_MAX_ITEMS = 20;

/** Slack-escaped text: Slack reads &, < and > as markup. */
function slackEscape(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** A Slack incoming-webhook message (Block Kit) for one approval or a digest; `text` is the notification's fallback. */
export function slackMessage(items: Announced[]) {
  const single = items.length === 1;
  const blocks: unknown[] = [];
  if (!single) blocks.push({ type: "header", text: { type: "plain_text", text: `${items.length} approvals need a decision` } });
  for (const item of items.slice(0, SLACK_MAX_ITEMS)) {
    const args = keyArguments(item.args)
      .map(([key, value]) => `${slackEscape(key)}: ${slackEscape(value)}`)
      .join("\n");
    blocks.push(
      { type: "section", text: { type: "mrkdwn", text: `*${slackEscape(headline(item))}*${item.summary ? `\n${slackEscape(item.summary)}` : ""}` } },
      { type: "section", text: { type: "mrkdwn", text: `\`\`\`${args}\`\`\`` } },
      { type: "context", elements: [{ type: "mrkdwn", text: slackEscape(`Asked of ${item.askedOf}; ${expiryText(item.expiresAt)}`) }] },
      { type: "actions", elements: [{ type: "button", text: { type: "plain_text", text: "Open in Tollgate" }, url: item.link }] },
    );
  }
  if (items.length > SLACK_MAX_ITEMS) {
    blocks.push({ type: "context", elements: [{ type: "mrkdwn", text: `and ${items.length - SLACK_MAX_ITEMS} more in the console` }] });
  }
  return { text: single ? headline(items[0]!) : `${items.length} approvals need a decision`, blocks };
}

/** The body of a generic JSON webhook: the same content as data. */
export function webhookPayload(items: Announced[], notificationIds: string[]) {
  return {
    type: items.length === 1 ? `approval.${items[0]!.reason.toLowerCase()}` : "approval.digest",
    notificationIds,
    approvals: items.map((item) => ({
      approvalId: item.approvalId,
      reason: item.reason.toLowerCase(),
      tool: item.tool,
      agent: item.agent,
      summary: item.summary,
      args: item.args,
      askedOf: item.askedOf,
      expiresAt: item.expiresAt?.toISOString() ?? null,
      link: item.link,
    })),
  };
}

/** Who is asked, in words. */
export function describeAsk(ask: { role: string; operators: string[]; group: string | null }): string {
  const named = [...ask.operators, ...(ask.group ? [`group ${ask.group}`] : [])];
  if (named.length > 0) return named.join(", ");
  return ask.role === "ADMIN" ? "admins" : "operators";
}

export interface DigestBudget {
  /** At most this many messages per channel within the window; what exceeds it waits and goes out as one digest. */
  threshold: number;
  windowMs: number;
}

/**
 * How a channel sends the announcements due now: one message each while the
 * window's budget lasts, one digest for all of them when they exceed it, or
 * nothing until `holdUntil` when the budget is spent.
 */
export function planSend(due: number, sentInWindow: Date[], budget: DigestBudget, now: Date): { kind: "each" } | { kind: "digest" } | { kind: "hold"; until: Date } {
  const recent = sentInWindow.filter((at) => now.getTime() - at.getTime() < budget.windowMs).sort((a, b) => a.getTime() - b.getTime());
  const left = budget.threshold - recent.length;
  if (left <= 0) return { kind: "hold", until: new Date(recent[0]!.getTime() + budget.windowMs) };
  if (due <= left) return { kind: "each" };
  return { kind: "digest" };
}
