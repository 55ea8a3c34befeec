"use client";
// The decision controls of one pending approval: approve, reject with a message,
// edit the arguments (one field per argument, or raw JSON; see args-editor.tsx),
// respond with a text answer. Only the actions the agent allowed are offered.
import { forwardRef, useEffect, useImperativeHandle, useRef, useState, type FormEvent, type KeyboardEvent, type RefObject } from "react";
import { defaultsOf, FormFields, type FormValues } from "./form-fields";
import { draftsOf, useDraft } from "./drafts";
import { decisionOutbox, type DecideInput, type OutboxEntry } from "@/lib/decision-outbox";
import type { AlreadyDecided } from "@/lib/errors";
import { useNow } from "@/lib/format";
import type { ApprovalItem, DecisionAction } from "@/lib/types";
import { describeEntry, isWaiting, useOutboxEntry } from "../decision-toasts";
import { prettyJson } from "../ui";
import { ArgsEditor } from "./args-editor";
import { useArming, type Arming } from "./use-arming";

/** Shortcuts pass when their key went down (the event's timeStamp): a press from before the approval was armed does nothing. */
export interface DecisionPanelHandle {
  approve(startedAt: number): void;
  open(mode: "reject" | "edit" | "respond", startedAt: number): void;
}

type Mode = "reject" | "edit" | "respond" | "remember" | null;

type RememberScope = "session" | "hour" | "always";

const SCOPE_LABEL: Record<RememberScope, string> = { session: "in this session", hour: "for the next hour", always: "always (until revoked)" };

function argumentKeys(args: unknown): string[] {
  return args && typeof args === "object" && !Array.isArray(args) ? Object.keys(args) : [];
}

/** Equality conditions on the chosen top-level arguments, with paths that survive any key. */
function pinnedConditions(args: unknown, keys: string[]) {
  const values = args as Record<string, unknown>;
  return keys.map((key) => ({
    path: /^[A-Za-z_$][\w$-]*$/.test(key) ? `$.${key}` : `$[${JSON.stringify(key)}]`,
    op: "eq" as const,
    value: values[key] as never,
  }));
}

export const DecisionPanel = forwardRef<
  DecisionPanelHandle,
  {
    approval: ApprovalItem;
    myEmail: string;
    myRole: "ADMIN" | "OPERATOR" | "VIEWER";
    onLateDecision(notice: AlreadyDecided): void;
    onDecided(action: DecisionAction): void;
  }
>(function DecisionPanel({ approval, myEmail, myRole, onLateDecision, onDecided }, ref) {
  const [message, setMessage] = useDraft(approval.approvalId, "message", "");
  const [answer, setAnswer] = useDraft(approval.approvalId, "answer", "");
  const [editText, setEditText] = useDraft(approval.approvalId, "edit", prettyJson(approval.args));
  const [formValues, setFormValues] = useState<FormValues>(() => {
    // A form answer the server refused comes back as it was sent, to be corrected.
    const refused = decisionOutbox().get(approval.approvalId);
    if (refused?.state === "failed" && refused.input.action === "edit" && refused.input.args) return refused.input.args as FormValues;
    return approval.form ? defaultsOf(approval.form) : {};
  });
  // A draft left from before a reload reopens where it was being written.
  const [mode, setMode] = useState<Mode>(() => {
    const drafts = draftsOf(approval.approvalId);
    if (drafts.message !== undefined) return "reject";
    if (drafts.edit !== undefined) return "edit";
    // A question or a form is answered: its answer box is open from the start.
    if (approval.kind === "form") return "edit";
    return drafts.answer !== undefined || approval.kind === "question" ? "respond" : null;
  });
  const [failure, setFailure] = useState<string | null>(null);
  const [scope, setScope] = useState<RememberScope>("session");
  // Top-level arguments the remembered rule must see again with the same value.
  const [pinned, setPinned] = useState<string[]>([]);
  const [voted, setVoted] = useState<string | null>(null);
  const messageRef = useRef<HTMLTextAreaElement>(null);
  const answerRef = useRef<HTMLTextAreaElement>(null);
  const allow = new Set(approval.allow);
  // One's own vote on a quorum is cast: Approve says so and takes no second press.
  const iVoted = Boolean(voted) || approval.votes.some((vote) => vote.decidedBy === myEmail);

  const arming = useArming();
  const outbox = decisionOutbox();
  const queued = useOutboxEntry(approval.approvalId);
  const subject = `${approval.tool} for ${approval.agent}`;

  // What the server said of this operator's decision, while this approval is still on screen.
  useEffect(() => {
    if (queued?.state === "late" && queued.late) onLateDecision(queued.late);
    if (queued?.state === "failed") {
      setFailure(`${queued.note}. Nothing was decided; fix this and try again.`);
      reopen(queued.input);
    }
    if (queued?.state === "voted") setVoted(`Your approval is recorded: ${queued.note}; any rejection ends it.`);
  }, [queued?.state, queued?.late, queued?.note, onLateDecision]);

  /** A refused decision opens again as it was sent, to be corrected (the panel stays mounted when nothing else is waiting). */
  function reopen(input: DecideInput) {
    if (input.action === "reject") {
      setMessage(input.message ?? "");
      setMode("reject");
    }
    if (input.action === "respond") {
      setAnswer(input.message ?? "");
      setMode("respond");
    }
    if (input.action === "edit") {
      if (approval.kind === "form") setFormValues(input.args as FormValues);
      else setEditText(prettyJson(input.args));
      setMode("edit");
    }
  }

  useImperativeHandle(ref, () => ({
    approve: (startedAt) => {
      if (allow.has("approve") && !iVoted && !isWaiting(queued) && arming.accepts(startedAt)) submit("approve");
    },
    open: (next, startedAt) => {
      if (!allow.has(next) || isWaiting(queued) || !arming.accepts(startedAt)) return;
      setMode(next);
    },
  }));

  useEffect(() => {
    if (mode === "reject") messageRef.current?.focus();
    if (mode === "respond") answerRef.current?.focus();
  }, [mode]);

  /** Hands the decision to the page's outbox, which sends it unless it is undone in time. */
  function send(input: DecideInput) {
    if (!outbox.queue(input, subject, myEmail)) return;
    setMode(null);
    onDecided(input.action);
  }

  function submit(action: DecisionAction) {
    setFailure(null);
    if (action === "approve") {
      const remember = mode === "remember" ? { scope, ...(pinned.length ? { args: pinnedConditions(approval.args, pinned) } : {}) } : undefined;
      send({ approvalId: approval.approvalId, action, ...(remember ? { remember } : {}) });
    }
    if (action === "reject") send({ approvalId: approval.approvalId, action, ...(message.trim() ? { message: message.trim() } : {}) });
    if (action === "respond") {
      if (!answer.trim()) {
        setFailure("Write the answer the agent gets back before sending.");
        return;
      }
      send({ approvalId: approval.approvalId, action, message: answer.trim() });
    }
    if (action === "edit" && approval.kind === "form") {
      send({ approvalId: approval.approvalId, action, args: formValues as never });
      return;
    }
  }

  const onFormKey = (action: DecisionAction) => (event: KeyboardEvent) => {
    if (event.key === "Enter" && (event.metaKey || event.ctrlKey)) {
      event.preventDefault();
      // A held Ctrl+Enter sends once.
      if (event.repeat || !arming.accepts(event.timeStamp)) return;
      submit(action);
    }
    if (event.key === "Escape") {
      event.preventDefault();
      setMode(null);
    }
  };
  const onSubmit = (action: DecisionAction) => (event: FormEvent) => {
    event.preventDefault();
    submit(action);
  };

  const waiting = isWaiting(queued);
  // A quorum cannot be remembered by one person; "always" is for admins.
  const mayRemember = allow.has("approve") && approval.requiredApprovals === 1;
  const needsRole = approval.requiredRole === "ADMIN" && myRole !== "ADMIN";
  // While arming, a bar fills the button: it takes presses once full.
  const button =
    "relative overflow-hidden rounded px-3 py-1.5 text-sm font-medium disabled:cursor-not-allowed disabled:opacity-50 aria-disabled:cursor-wait aria-disabled:opacity-60 " +
    "after:absolute after:inset-x-0 after:bottom-0 after:h-0.5 after:origin-left after:bg-current after:content-[''] data-[armed=false]:after:animate-[arming_700ms_linear_forwards] data-[armed=true]:after:hidden";
  const toggle = (next: Exclude<Mode, null>) => arming.press(() => setMode(mode === next ? null : next));

  if (needsRole) {
    return (
      <p className="rounded border border-slate-200 bg-slate-100 p-2 text-sm text-slate-700">
        This approval must be decided by an admin; you are an approver.
      </p>
    );
  }

  // The bar sticks to the bottom of the screen while the arguments above it scroll;
  // the forms it opens come just above it.
  return (
    <>
      {waiting || mode === null ? null : (
      <section aria-label="Decision details" className="mt-auto space-y-3">
      {mode === "reject" ? (
        <MessageForm
          id="reject-message"
          label="Message to the agent (why it is rejected)"
          inputRef={messageRef}
          value={message}
          onChange={setMessage}
          onSubmit={onSubmit("reject")}
          onKeyDown={onFormKey("reject")}
          onCancel={() => setMode(null)}
          submitLabel="Reject"
          submitDisabled={false}
          arming={arming}
          submitClassName={`${button} bg-red-700 text-white hover:bg-red-800`}
          cancelClassName={`${button} text-slate-600`}
          frameClassName="border-red-200 bg-red-50/50"
          hint="Ctrl+Enter sends, Esc cancels"
        />
      ) : null}

      {mode === "remember" ? (
        <form onSubmit={onSubmit("approve")} className="space-y-2 rounded border border-emerald-200 bg-emerald-50/50 p-3">
          <fieldset>
            <legend className="text-sm font-medium">
              Approve, and from now on approve <span className="font-mono">{approval.tool}</span> for <span className="font-mono">{approval.agent}</span>:
            </legend>
            <div className="mt-1 flex flex-wrap gap-x-4 gap-y-1 text-sm">
              {(Object.keys(SCOPE_LABEL) as RememberScope[]).map((option) => (
                <label key={option} className={`flex items-center gap-1.5 ${option === "always" && myRole !== "ADMIN" ? "text-slate-400" : ""}`}>
                  <input type="radio" name="remember-scope" value={option} checked={scope === option} disabled={option === "always" && myRole !== "ADMIN"} onChange={() => setScope(option)} />
                  {SCOPE_LABEL[option]}
                </label>
              ))}
            </div>
          </fieldset>
          {argumentKeys(approval.args).length ? (
            <fieldset>
              <legend className="text-sm font-medium">Only when these arguments are the same as now (optional):</legend>
              <div className="mt-1 space-y-1 text-sm">
                {argumentKeys(approval.args).map((key) => (
                  <label key={key} className="flex min-w-0 items-center gap-1.5">
                    <input
                      type="checkbox"
                      checked={pinned.includes(key)}
                      onChange={(event) => setPinned((keys) => (event.target.checked ? [...keys, key] : keys.filter((each) => each !== key)))}
                    />
                    <span className="font-mono text-xs">{key}</span>
                    <span className="truncate font-mono text-xs text-slate-500">= {JSON.stringify((approval.args as Record<string, unknown>)[key])}</span>
                  </label>
                ))}
              </div>
            </fieldset>
          ) : null}
          <p className="text-xs text-slate-600">
            <span data-testid="remember-covers" className="block font-medium text-slate-800">
              It covers calls asked from now on: approvals already waiting, for this tool too, stay in the inbox for a decision.
            </span>
            This writes a policy rule, listed on the Policies page, where it can be revoked. {myRole !== "ADMIN" ? "Only admins may remember a decision for always." : ""}
          </p>
          <div className="flex items-center gap-2">
            <button type="submit" {...arming.press()} className={`${button} bg-emerald-700 text-white hover:bg-emerald-800`}>
              Approve and remember
            </button>
            <button type="button" onClick={() => setMode(null)} className={`${button} text-slate-600`}>
              Cancel
            </button>
          </div>
        </form>
      ) : null}

      {mode === "edit" && approval.form ? (
        <form onSubmit={onSubmit("edit")} onKeyDown={onFormKey("edit")} aria-label="Answer the form" className="space-y-3 rounded border border-slate-300 bg-white p-3">
          <FormFields form={approval.form} values={formValues} onChange={setFormValues} idPrefix={`form-${approval.approvalId}`} />
          <div className="flex flex-wrap items-center gap-2">
            <button type="submit" {...arming.press()} className={`${button} bg-emerald-700 text-white hover:bg-emerald-800`}>
              Send answer
            </button>
            <button type="button" onClick={() => setFormValues(defaultsOf(approval.form!))} className={`${button} text-slate-600`}>
              Reset
            </button>
          </div>
        </form>
      ) : mode === "edit" ? (
        <ArgsEditor
          proposed={approval.args}
          text={editText}
          onText={setEditText}
          agent={approval.agent}
          tool={approval.tool}
          arming={arming}
          buttonClassName={button}
          onSend={(args) => send({ approvalId: approval.approvalId, action: "edit", args: args as never })}
          onCancel={() => setMode(null)}
        />
      ) : null}

      {mode === "respond" ? (
        <MessageForm
          id="respond-answer"
          label={approval.kind === "question" ? "Your answer to the agent" : "Answer returned to the agent (the tool does not run)"}
          inputRef={answerRef}
          value={answer}
          onChange={setAnswer}
          onSubmit={onSubmit("respond")}
          onKeyDown={onFormKey("respond")}
          onCancel={() => setMode(null)}
          submitLabel="Send answer"
          submitDisabled={!answer.trim()}
          arming={arming}
          submitClassName={`${button} bg-slate-900 text-white`}
          cancelClassName={`${button} text-slate-600`}
          frameClassName="border-slate-300 bg-white"
        />
      ) : null}

      </section>
      )}
      <div role="group" aria-label="Decision" data-testid="decision-bar" className={`sticky bottom-0 z-10 -mx-4 ${waiting || mode === null ? "mt-auto" : ""} select-none space-y-2 border-t border-slate-200 bg-white/95 px-4 py-2 backdrop-blur md:-mx-5 md:px-5`}>
        {voted || iVoted ? (
          <p role="status" className="rounded border border-emerald-300 bg-emerald-50 p-2 text-sm text-emerald-950">
            {voted ?? "You approved this; it waits for the other approvers."}
          </p>
        ) : null}
        {waiting ? (
          <QueuedDecision entry={queued!} />
        ) : (
          <div className="flex flex-wrap gap-2">
            {allow.has("approve") && iVoted ? (
              <button type="button" disabled aria-pressed="true" className={`${button} border border-emerald-600 bg-emerald-50 text-emerald-900`}>
                ✓ Approved by you ({approval.votes.length || 1} of {approval.requiredApprovals})
              </button>
            ) : allow.has("approve") ? (
              <button type="button" {...arming.press(() => submit("approve"))} className={`${button} bg-emerald-700 text-white hover:bg-emerald-800`} aria-keyshortcuts="a">
                Approve <kbd className="ml-1 text-xs opacity-70">a</kbd>
              </button>
            ) : null}
            {allow.has("reject") ? (
              <button type="button" {...toggle("reject")} aria-expanded={mode === "reject"} className={`${button} border border-red-300 bg-white text-red-800 hover:bg-red-50`} aria-keyshortcuts="r">
                {approval.kind === "question" || approval.kind === "form" ? "Decline…" : "Reject…"} <kbd className="ml-1 text-xs opacity-70">r</kbd>
              </button>
            ) : null}
            {allow.has("edit") ? (
              <button type="button" {...toggle("edit")} aria-expanded={mode === "edit"} className={`${button} border border-slate-300 bg-white text-slate-800 hover:bg-slate-50`} aria-keyshortcuts="e">
                {approval.kind === "form" ? "Fill in…" : "Edit arguments…"} <kbd className="ml-1 text-xs opacity-70">e</kbd>
              </button>
            ) : null}
            {mayRemember ? (
              <button type="button" {...toggle("remember")} aria-expanded={mode === "remember"} className={`${button} border border-emerald-300 bg-white text-emerald-900 hover:bg-emerald-50`}>
                Approve and remember…
              </button>
            ) : null}
            {allow.has("respond") ? (
              <button type="button" {...toggle("respond")} aria-expanded={mode === "respond"} className={`${button} border border-slate-300 bg-white text-slate-800 hover:bg-slate-50`}>
                {approval.kind === "question" ? "Answer…" : "Respond instead…"}
              </button>
            ) : null}
          </div>
        )}
        {failure ? (
          <p role="alert" className="rounded border border-red-200 bg-red-50 p-2 text-sm text-red-800">
            {failure}
          </p>
        ) : null}
      </div>
    </>
  );
});

/** This approval's decision waits in the outbox: it can still be taken back. */
function QueuedDecision({ entry }: { entry: OutboxEntry }) {
  const now = useNow();
  const outbox = decisionOutbox();
  // Undo takes the place of the button just pressed: a second click of that press must not land on it.
  const arming = useArming();
  return (
    <div data-testid="queued-decision" className="flex flex-wrap items-center gap-2 text-sm">
      <p className="font-medium">{describeEntry(entry, now)}</p>
      {entry.state !== "sending" ? (
        <button type="button" {...arming.press(() => outbox.undo(entry.approvalId))} className="rounded border border-slate-400 bg-white px-2 py-0.5 text-xs font-medium hover:bg-slate-100 aria-disabled:cursor-wait aria-disabled:opacity-60">
          Undo
        </button>
      ) : null}
    </div>
  );
}

/** A short text form (reject's message, respond's answer) with send and cancel. */
function MessageForm(props: {
  id: string;
  label: string;
  inputRef: RefObject<HTMLTextAreaElement | null>;
  value: string;
  onChange: (value: string) => void;
  onSubmit: (event: FormEvent) => void;
  onKeyDown: (event: KeyboardEvent) => void;
  onCancel: () => void;
  submitLabel: string;
  submitDisabled: boolean;
  arming: Arming;
  submitClassName: string;
  cancelClassName: string;
  frameClassName: string;
  hint?: string;
}) {
  return (
    <form onSubmit={props.onSubmit} className={`space-y-2 rounded border p-3 ${props.frameClassName}`}>
      <label className="block text-sm font-medium" htmlFor={props.id}>
        {props.label}
      </label>
      <textarea
        id={props.id}
        ref={props.inputRef}
        rows={3}
        value={props.value}
        onChange={(event) => props.onChange(event.target.value)}
        onKeyDown={props.onKeyDown}
        className="block w-full rounded border border-slate-300 bg-white p-2 text-sm"
      />
      <div className="flex items-center gap-2">
        <button type="submit" disabled={props.submitDisabled} {...props.arming.press()} className={props.submitClassName}>
          {props.submitLabel}
        </button>
        <button type="button" onClick={props.onCancel} className={props.cancelClassName}>
          Cancel
        </button>
        {props.hint ? <span className="text-xs text-slate-500">{props.hint}</span> : null}
      </div>
    </form>
  );
}
