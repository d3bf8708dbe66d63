/** search (POST /v1/search, the MCP tool search_rules) and feedback (POST /v1/search/:search_id/feedback). */
import { Effect } from "effect"
import { CurrentCaller } from "../auth/caller.js"
import { jsonBytes, operation } from "../auth/operation.js"
import { NotFound } from "../contracts/errors.js"
import { FeedbackInput, SearchRequest } from "../domain/search-schemas.js"
import { feedbackScopes, FEEDBACK_NOT_FOUND, recordFeedback } from "../search/feedback.js"
import { ReadPool } from "../read-pool/pool.js"

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

export const search = operation({
  name: "search",
  right: "read",
  input: SearchRequest,
  label: "search",
  scopes: (req) => req.scopes,
  crossScope: (req) => req.cross_scope,
  // search() runs in the read pool (off the main thread where it can) and comes back as the bytes of
  // its JSON, the body as it is sent; the search_log rows stay with the writer
  run: (req, call) =>
    Effect.map(Effect.flatMap(ReadPool, (pool) => pool.search(req, call.requestId)), ({ heads, body, perScope }) => ({
      status: 200,
      body: jsonBytes(body),
      refs: heads.map((h) => h.ref),
      // each scope's row records what its own search did (§7 step 9): its terms, variants, stages and heads
      perScope: perScope.map((s) => ({
        scope: s.scope,
        refs: heads.filter((h) => h.scope === s.scope).map((h) => h.ref),
        log: { terms: s.terms, variants: s.variants, stages: s.stages }
      }))
    }))
})

export const feedback = operation({
  name: "feedback",
  right: "read",
  input: FeedbackInput,
  label: "feedback",
  scopes: (f) => feedbackScopes(f),
  // the refs of one search may span the scopes of a cross-scope search
  crossScope: () => true,
  refs: (f) => [...f.bundles.map((b) => b.ref), ...f.missing],
  run: (f) =>
    Effect.gen(function*() {
      // an id that cannot be a search_id is the same 404 as an unknown one, logged like it (§5.2 step 6)
      if (!UUID_RE.test(f.search_id)) return yield* new NotFound({ message: FEEDBACK_NOT_FOUND })
      const caller = yield* CurrentCaller
      const out = yield* recordFeedback(f.search_id, { bundles: f.bundles, missing: f.missing }, caller.grant.id)
      return { status: 200, body: out, refs: [...f.bundles.map((b) => b.ref), ...f.missing] }
    })
})
