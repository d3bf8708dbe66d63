import type { Migration } from "../types.js"
import { migration as m0001 } from "./0001-init.js"
import { migration as m0002 } from "./0002-graph.js"
import { migration as m0003 } from "./0003-lexical.js"

/** Scope migrations in order; the approval one (0004) comes with its issue. */
export const SCOPE_MIGRATIONS: ReadonlyArray<Migration> = [m0001, m0002, m0003]
