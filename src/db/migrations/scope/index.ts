import type { Migration } from "../types.js"
import { migration as m0001 } from "./0001-init.js"
import { migration as m0002 } from "./0002-graph.js"
import { migration as m0003 } from "./0003-lexical.js"
import { migration as m0004 } from "./0004-vectors.js"

/**
 * Scope migrations in order. 0004 is reserved for the approval tables (architecture.md §4.1,
 * `0004-approval.ts`); derived read structures live in the migration of the tables they serve.
 * 0004-vectors (stage b) is numbered here as the next one and renumbered after 0004-approval at merge.
 */
export const SCOPE_MIGRATIONS: ReadonlyArray<Migration> = [m0001, m0002, m0003, m0004]
