/**
 * The `next` rules of graph.md §8: pure functions, at most three entries each, in the contract's
 * order. A `why` names entity ids only (never names: those may be foreign text).
 */
import type { Candidate, Next } from "../contracts/errors.js"

export const MAX_NEXT = 3

const cap = (next: ReadonlyArray<Next>): Array<Next> => next.slice(0, MAX_NEXT)

/** resolve: exact/alias → check the place, file the item; candidates → best + create; none → tree + create. */
export const nextForResolve = (candidates: ReadonlyArray<Candidate>): Array<Next> => {
  const sure = candidates.find((c) => c.match === "exact" || c.match === "alias")
  if (sure !== undefined) {
    return cap([
      { tool: "entity_path", why: `check the place of ${sure.id}` },
      { tool: "link_propose", why: `file the item there (entity/${sure.id})` }
    ])
  }
  const best = candidates[0]
  if (best !== undefined) {
    return cap([
      { tool: "entity_path", why: `check the place of the best candidate ${best.id}; show the paths and ask the person` },
      { tool: "entity_create", why: "only if the person says none is meant" }
    ])
  }
  return cap([
    { tool: "entity_tree", why: "find the parent" },
    { tool: "entity_create", why: "create it under the parent you found" }
  ])
}

/** create / move / update done → file items there, see the parent's level. */
export const nextForWrite = (id: string, parentId: string | null): Array<Next> =>
  cap([
    { tool: "link_propose", why: `file items under entity/${id}` },
    {
      tool: "entity_tree",
      why: parentId === null ? "see the top level of the scope" : `see the level of the parent ${parentId}`
    }
  ])

/** tree: expand the first node with hidden children, or read the next page. */
export const nextForTree = (
  nodes: ReadonlyArray<{ readonly id: string; readonly hidden_children: number }>,
  nextPage: number | null
): Array<Next> => {
  const out: Array<Next> = []
  const hidden = nodes.find((n) => n.hidden_children > 0)
  if (hidden !== undefined) {
    out.push({ tool: "entity_tree", why: `expand ${hidden.id}: ${hidden.hidden_children} children not shown` })
  }
  if (nextPage !== null) out.push({ tool: "entity_tree", why: `read page ${nextPage} of this level` })
  return cap(out)
}

/** duplicate-candidate → check the first candidate's place. */
export const nextForDuplicate = (candidates: ReadonlyArray<Candidate>): Array<Next> => {
  const first = candidates[0]
  return first === undefined ? [] : cap([{ tool: "entity_path", why: `check the place of ${first.id}; it may be the one meant` }])
}

/** cycle → look at the target's place. */
export const nextForCycle = (targetId: string): Array<Next> =>
  cap([{ tool: "entity_path", why: `see the place of ${targetId}: it lies inside the moved subtree` }])

/** depth-limit of the tree → ask less deep, expand node by node. */
export const nextForTreeDepth = (parentId: string | null): Array<Next> =>
  cap([{ tool: "entity_tree", why: parentId === null ? "read the top level with depth ≤ 3" : `read ${parentId} with depth ≤ 3` }])

/** unknown or foreign entity → find it by name. */
export const nextForUnknown = (): Array<Next> => cap([{ tool: "entity_resolve", why: "find the entity by its name" }])

/** the pending structure list → look at the newest pending entity's place, or at the tree when nothing waits. */
export const nextForPending = (newestEntity: string | null): Array<Next> =>
  cap([newestEntity === null
    ? { tool: "entity_tree", why: "nothing waits for a person: see the top level of the scope" }
    : { tool: "entity_path", why: `see the place and history of ${newestEntity}, the newest pending entity change` }])
