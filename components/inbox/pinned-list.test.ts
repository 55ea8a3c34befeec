import { describe, expect, it } from "vitest";
import type { ApprovalItem } from "@/lib/types";
import { pinnedList } from "./pinned-list";

const item = (approvalId: string, tool = "t") => ({ approvalId, tool }) as ApprovalItem;

describe("pinned pending list", () => {
  it("keeps the pinned order, counts arrivals instead of showing them, and holds rows that stopped waiting in place", () => {
    const pinned = [item("a"), item("b"), item("c")];
    // Fresh from the server: a new most urgent one first, b decided elsewhere, c changed.
    const fresh = [item("new"), item("a"), item("c", "t2")];
    const list = pinnedList(pinned, fresh);
    expect(list.items.map((each) => each.approvalId)).toEqual(["a", "b", "c"]);
    expect(list.items[2]!.tool).toBe("t2");
    expect([...list.gone]).toEqual(["b"]);
    expect(list.arrived).toBe(1);
  });
});
