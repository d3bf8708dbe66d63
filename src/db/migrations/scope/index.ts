import type { Migration } from "../types.js"
import { migration as m0001 } from "./0001-init.js"
import { migration as m0002 } from "./0002-graph.js"

/** Scope migrations in order; the lexical (0003) and approval (0004) ones come with their issues. */
export const SCOPE_MIGRATIONS: ReadonlyArray<Migration> = [m0001, m0002]
