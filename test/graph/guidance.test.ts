/** The next rules of graph.md §8: at most three entries, in the contract's order, ids only. */
import { describe, expect, it } from "vitest"
import type { Candidate } from "../../src/contracts/errors.js"
import {
  MAX_NEXT, nextForCycle, nextForDuplicate, nextForResolve, nextForTree, nextForTreeDepth, nextForUnknown, nextForWrite
} from "../../src/graph/guidance.js"

const cand = (id: string, match: Candidate["match"], score: number): Candidate => ({
  id, name: `Name of ${id}`, type: "department", status: "active", aliases: [], path: ["Acme", `Name of ${id}`], score, match
})

describe("next", () => {
  it("resolve with an exact or alias match: check the place, then file the item there", () => {
    const next = nextForResolve([cand("sales-e0002", "typo", 0.99), cand("sales-e0007", "alias", 0.98)])
    expect(next.map((n) => n.tool)).toEqual(["entity_path", "link_propose"])
    expect(next[0]?.why).toContain("sales-e0007")
    expect(next[1]?.why).toContain("entity/sales-e0007")
  })

  it("resolve with candidates but no exact match: the best candidate's path, create only if none is meant", () => {
    const next = nextForResolve([cand("sales-e0003", "typo", 0.92), cand("sales-e0004", "similar", 0.6)])
    expect(next.map((n) => n.tool)).toEqual(["entity_path", "entity_create"])
    expect(next[0]?.why).toContain("sales-e0003")
    expect(next[1]?.why).toBe("only if the person says none is meant")
  })

  it("resolve without candidates: find the parent, then create", () => {
    expect(nextForResolve([]).map((n) => n.tool)).toEqual(["entity_tree", "entity_create"])
    expect(nextForResolve([])[0]?.why).toBe("find the parent")
  })

  it("create/move done: link_propose, then the tree of the parent (or the top level)", () => {
    expect(nextForWrite("sales-e0005", "sales-e0001")).toEqual([
      { tool: "link_propose", why: "file items under entity/sales-e0005" },
      { tool: "entity_tree", why: "see the level of the parent sales-e0001" }
    ])
    expect(nextForWrite("sales-e0005", null)[1]?.why).toBe("see the top level of the scope")
  })

  it("tree: the first node with hidden children, or the next page; nothing when all is shown", () => {
    const nodes = [{ id: "sales-e0001", hidden_children: 0 }, { id: "sales-e0002", hidden_children: 4 }, { id: "sales-e0003", hidden_children: 9 }]
    expect(nextForTree(nodes, null)).toEqual([{ tool: "entity_tree", why: "expand sales-e0002: 4 children not shown" }])
    expect(nextForTree(nodes, 2).map((n) => n.why)).toEqual(["expand sales-e0002: 4 children not shown", "read page 2 of this level"])
    expect(nextForTree([{ id: "sales-e0001", hidden_children: 0 }], 3)).toEqual([{ tool: "entity_tree", why: "read page 3 of this level" }])
    expect(nextForTree([{ id: "sales-e0001", hidden_children: 0 }], null)).toEqual([])
  })

  it("duplicate-candidate: the first candidate's path; cycle: the target's path", () => {
    expect(nextForDuplicate([cand("sales-e0009", "exact", 1), cand("sales-e0001", "typo", 0.9)])).toEqual([
      { tool: "entity_path", why: "check the place of sales-e0009; it may be the one meant" }
    ])
    expect(nextForDuplicate([])).toEqual([])
    expect(nextForCycle("sales-e0004")).toEqual([{ tool: "entity_path", why: "see the place of sales-e0004: it lies inside the moved subtree" }])
  })

  it("never more than three entries, and no entity names (foreign text) in why", () => {
    const all = [
      nextForResolve([cand("sales-e0001", "exact", 1)]), nextForResolve([cand("sales-e0001", "typo", 0.9)]), nextForResolve([]),
      nextForWrite("sales-e0001", "sales-e0002"), nextForTree([{ id: "sales-e0001", hidden_children: 1 }], 2),
      nextForDuplicate([cand("sales-e0001", "exact", 1)]), nextForCycle("sales-e0001"), nextForTreeDepth(null), nextForUnknown()
    ]
    for (const next of all) {
      expect(next.length).toBeGreaterThan(0)
      expect(next.length).toBeLessThanOrEqual(MAX_NEXT)
      for (const n of next) expect(n.why).not.toContain("Name of")
    }
  })
})
