import { describe, expect, it } from "vitest";
import { formatTime } from "./format";
import { sessionLabels } from "./session-labels";

const at = (iso: string) => ({ iso, shown: formatTime(iso) });

describe("session labels", () => {
  it("a unique title is the label; equal titles and untitled sessions add when they started, and the id's end only when that ties too", () => {
    const morning = at("2026-11-27T09:00:00Z");
    const noon = at("2026-11-27T12:00:00Z");
    const labels = sessionLabels([
      { id: "ses_a1", title: "Purge drafts", createdAt: morning.iso },
      { id: "ses_b2", title: "Refund run", createdAt: morning.iso },
      { id: "ses_c3", title: "Refund run", createdAt: noon.iso },
      { id: "ses_d4", title: null, createdAt: noon.iso },
      { id: "ses_e5000001", title: "Twins", createdAt: noon.iso },
      { id: "ses_e5000002", title: "Twins ", createdAt: noon.iso },
    ]);
    expect(Object.fromEntries(labels)).toEqual({
      ses_a1: "Purge drafts",
      ses_b2: `Refund run · started ${morning.shown}`,
      ses_c3: `Refund run · started ${noon.shown}`,
      ses_d4: `Untitled session · started ${noon.shown}`,
      ses_e5000001: `Twins · started ${noon.shown} · …000001`,
      ses_e5000002: `Twins · started ${noon.shown} · …000002`,
    });
  });
});
