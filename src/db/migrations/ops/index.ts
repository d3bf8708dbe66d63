import type { Migration } from "../types.js"
import { migration as m0001 } from "./0001-init.js"
import { migration as m0002 } from "./0002-backup-verify.js"
import { migration as m0003 } from "./0003-backup-run.js"
import { migration as m0004 } from "./0004-ended-session.js"
import { migration as m0005 } from "./0005-reranker-usage.js"
import { migration as m0006 } from "./0006-keys.js"
import { migration as m0007 } from "./0007-redact-right.js"
import { migration as m0008 } from "./0008-redaction-ledger.js"

export const OPS_MIGRATIONS: ReadonlyArray<Migration> = [m0001, m0002, m0003, m0004, m0005, m0006, m0007, m0008]
