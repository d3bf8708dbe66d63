import type { Migration } from "../types.js"
import { migration as m0001 } from "./0001-init.js"
import { migration as m0002 } from "./0002-graph.js"
import { migration as m0003 } from "./0003-lexical.js"
import { migration as m0004 } from "./0004-relation-index.js"
import { migration as m0005 } from "./0005-graph-read.js"

/**
 * Scope migrations in order. 0004 is the derived relation index of search (docs/decisions.md,
 * "Search performance"); 0005 the derived read structures of the entity graph (docs/decisions.md,
 * "Graph: performance"); the approval one comes with its issue as the next number.
 */
export const SCOPE_MIGRATIONS: ReadonlyArray<Migration> = [m0001, m0002, m0003, m0004, m0005]
