/**
 * store_source (POST /v1/sources) and the feeder's read-back of its own source (GET
 * /v1/sources/:id, §6.2a; unknown, foreign and another feeder's sources all answer the same
 * 404). Both leave one search_log row in the scope (§5.2 step 6), the 404s included.
 */
import { Effect } from "effect"
import { CurrentCaller } from "../auth/caller.js"
import { operation } from "../auth/operation.js"
import { ValidationFailed } from "../contracts/errors.js"
import { sourceRef } from "../contracts/ids.js"
import { parseInclude, ReadSourceInput, SourceRequest } from "../domain/source-schemas.js"
import { readSource as readStoredSource, storeSource as store } from "../domain/sources.js"

export const storeSource = operation({
  name: "store_source",
  right: "propose",
  input: SourceRequest,
  label: "source",
  scopes: (req) => [req.scope],
  refs: (req) => [sourceRef(req.source.id)],
  run: (req, call) =>
    Effect.gen(function*() {
      const caller = yield* CurrentCaller
      const stored = yield* store(req, caller.grant.id, { channel: caller.channel, requestId: call.requestId })
      return { status: stored.created ? 201 : 200, body: stored, refs: [sourceRef(stored.id)] }
    })
})

const INVALID_INCLUDE = new ValidationFailed({
  message: "include is a comma list of text and attachments, each at most once",
  issues: [{ path: "include", message: "text | attachments, each at most once" }]
})

export const readSource = operation({
  name: "read_source",
  right: "propose",
  input: ReadSourceInput,
  label: "query",
  check: (q) => (parseInclude(q.include) === null ? Effect.fail(INVALID_INCLUDE) : Effect.void),
  scopes: (q) => [q.scope],
  refs: (q) => [sourceRef(q.id)],
  run: (q) =>
    Effect.gen(function*() {
      const caller = yield* CurrentCaller
      const out = yield* readStoredSource(q.scope, q.id, caller.grant.id, parseInclude(q.include) ?? new Set())
      return { status: 200, body: out, refs: [sourceRef(out.id)] }
    })
})
