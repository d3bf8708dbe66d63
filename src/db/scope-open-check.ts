/**
 * ScopeOpenCheck: what runs on a scope file as it opens, after the checks of §4.3 and the
 * migrations and before the scope answers anything: the redaction ledger brings an older copy of
 * the file level with it (gaps.md §12 "Nothing comes back"; src/redaction/ledger.ts, wired in
 * src/services.ts). A port of this layer so ScopeStore needs nothing above it; a failure locks the
 * scope with its reason, like every failed open check.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Context, type Effect } from "effect"
import type { StoreOpenError } from "./errors.js"

export interface ScopeOpenCheckShape {
  /** runs on the scope's connection; StoreOpenError's reason becomes the lock reason */
  readonly onOpen: (scope: string, file: string, sql: SqlClient) => Effect.Effect<void, StoreOpenError>
}

export class ScopeOpenCheck extends Context.Tag("Groundnote/ScopeOpenCheck")<ScopeOpenCheck, ScopeOpenCheckShape>() {}
