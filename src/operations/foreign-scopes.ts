/**
 * The scopes a graph call names beyond its own (architecture.md §5.2 step 2: "from the id of every
 * ref"; graph.md §8): the scope of the request plus the scopes of the named ids that the grant does
 * not cover, so the pipeline refuses them (403 scope-not-allowed, the same body whether the scope
 * exists or not). An id of another scope inside the grant is left to the domain, which answers it
 * as graph.md says (scope-mismatch for a parent or a link end, not-found for the entity itself).
 */
import type { Caller } from "../auth/caller.js"

export const withForeignScopes = (scope: string, idScopes: ReadonlyArray<string>, caller: Caller): Array<string> =>
  [scope, ...new Set(idScopes.filter((s) => s !== scope && !caller.grant.scopes.includes(s)))]
