import type { Migration } from "../types.js"
import { migration as m0001 } from "./0001-init.js"
import { migration as m0002 } from "./0002-graph.js"
import { migration as m0003 } from "./0003-lexical.js"
import { migration as m0004 } from "./0004-approval.js"
import { migration as m0005 } from "./0005-vectors.js"
import { migration as m0006 } from "./0006-index-stamp.js"
import { migration as m0007 } from "./0007-content-stamp.js"
import { migration as m0008 } from "./0008-entity-override.js"
import { migration as m0009 } from "./0009-redaction.js"
import { migration as m0010 } from "./0010-redaction-rowid.js"
import { migration as m0011 } from "./0011-structure-adoption.js"
import { migration as m0012 } from "./0012-proposal-neighbour.js"
import { migration as m0013 } from "./0013-repeat-lookup.js"

/**
 * Scope migrations in order. 0004 is the approval tables (architecture.md §4.1,
 * `0004-approval.ts`); it came after 0005-vectors had shipped, so it carries presentIf and a
 * file at version 5 gets it late. Derived read structures live in the migration of the tables
 * they serve.
 */
export const SCOPE_MIGRATIONS: ReadonlyArray<Migration> = [m0001, m0002, m0003, m0004, m0005, m0006, m0007, m0008, m0009, m0010, m0011, m0012, m0013]
