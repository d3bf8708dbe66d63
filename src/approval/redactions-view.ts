/**
 * GET /approval/redactions[?scope=] as a call of the scope-check pipeline (approval channel, a
 * person with `redact`; grant-wide without a scope), and the loading of that page for the form
 * posts that land on it (a refusal before a preview could be shown).
 */
import { Effect, Schema } from "effect"
import { CurrentCaller } from "../auth/caller.js"
import type { AppConfig } from "../config/config.js"
import { decodeStrict } from "../contracts/decode.js"
import { ScopeName } from "../contracts/ids.js"
import { ScopeStore } from "../db/scope-store.js"
import { clockwork, viewerOf } from "./context.js"
import { pageResponse } from "./layout.js"
import type { Page } from "./pages.js"
import { PAST_SHOWN, type PastSection, redactionsPage, type Refusal } from "./redactions-page.js"
import { pastRedactions } from "./redactions-queries.js"

/** After a redaction the page names it (its id, checked by its pattern). */
const REDACTION_ID_RE = /^[a-z][a-z0-9-]{1,39}-x\d{4,}$/

const RedactionsQuery = Schema.Struct({ scope: Schema.optional(ScopeName), done: Schema.optional(Schema.String), wal: Schema.optional(Schema.Literal("held")) })

/** The start page for the current caller: the term form over the grant's scopes and the past redactions of `shown`. */
export const loadRedactionsPage = (o: {
  readonly shown: ReadonlyArray<string>
  readonly scope: string | null
  readonly erased: string | null
  /** the redaction's WAL checkpoint did not complete */
  readonly walHeld?: boolean
  readonly refusal?: Refusal | null
  readonly term?: string
}) =>
  Effect.gen(function*() {
    const caller = yield* CurrentCaller
    const store = yield* ScopeStore
    const viewer = yield* viewerOf(caller.identity.identity, caller.grant.id)
    const clock = yield* clockwork
    const past: Array<PastSection> = []
    for (const scope of o.shown) {
      const read = yield* Effect.either(store.read(scope, ({ sql }) => pastRedactions(sql, PAST_SHOWN)))
      if (read._tag === "Right") past.push({ scope, unavailable: null, rows: read.right })
      else if (read.left._tag === "ScopeLocked") past.push({ scope, unavailable: read.left.message, rows: [] })
      else return yield* read.left
    }
    return redactionsPage({
      viewer, scopes: caller.grant.scopes, scope: o.scope, past, clock, erased: o.erased, walHeld: o.walHeld === true,
      ...(o.refusal === undefined ? {} : { refusal: o.refusal }), ...(o.term === undefined ? {} : { term: o.term })
    })
  })

export const redactionsPageCall: Page<{ readonly scope: string | null; readonly erased: string | null; readonly walHeld: boolean }, AppConfig | ScopeStore> = {
  parse: ({ query }) =>
    Effect.map(decodeStrict(RedactionsQuery, query, "query"), (q) => ({
      scope: q.scope ?? null,
      erased: q.done !== undefined && REDACTION_ID_RE.test(q.done) ? q.done : null,
      walHeld: q.wal === "held"
    })),
  call: {
    name: "list_redactions",
    right: "redact",
    scopes: (q) => (q.scope === null ? "grant" : [q.scope]),
    run: (q, call) =>
      Effect.map(loadRedactionsPage({ shown: call.scopes, scope: q.scope, erased: q.erased, walHeld: q.walHeld }), (doc) =>
        ({ status: 200, response: pageResponse(doc), refs: [] }))
  }
}
