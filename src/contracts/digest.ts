/**
 * The digest's query and answer (gaps.md §13 "Digest"), shared by the service (GET /ops/digest,
 * GET /approval/digest), the CLI (`groundnote approvals digest`) and the nightly's post to
 * approval.digest_url: what the policy adopted since a day, what waits, what is due for recheck.
 */
import { Schema } from "effect"
import { Day } from "./schemas.js"

/** The query of every door: `since`, a calendar day (config.zone); no other key. */
export const DigestQuery = Schema.Struct({ since: Day })
export type DigestQuery = typeof DigestQuery.Type

/** One scope of the digest as JSON: refs and counts. */
export interface DigestScopeJson {
  readonly scope: string
  readonly available: boolean
  /** why the scope could not be read (available false), else null */
  readonly message: string | null
  /** the rules (then the structure changes) the policy adopted since the day, newest first */
  readonly adopted: ReadonlyArray<string>
  readonly waiting: { readonly rules: number; readonly structure: number }
  /** confirmed rules past recheck_after_days, oldest review first */
  readonly due_for_recheck: ReadonlyArray<string>
}

/** GET /ops/digest's answer, the CLI's --json and the body posted to approval.digest_url. */
export interface DigestJson {
  readonly instance: string
  readonly since: string
  /** today in config.zone: the digest covers since … today */
  readonly today: string
  readonly scopes: ReadonlyArray<DigestScopeJson>
}
