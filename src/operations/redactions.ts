/**
 * The person's redaction (gaps.md §12, architecture.md §15.2 R4), written once for its two doors:
 * POST /v1/redactions/preview and POST /v1/redactions (JSON, src/http/routes/redactions.ts) and
 * the forms of /approval/redactions (src/approval/redactions-form.ts). The approval channel only,
 * a person whose grant holds `redact` (403 channel-not-allowed without it; the pipeline's step 4).
 *
 *  - preview: every place of the term in the scope, the identifiers that keep it, the rules whose
 *    text or evidence it touches, and the digest the confirmation sends back; nothing is written;
 *  - redact: holding the backup lock (409 backup-running while a backup run, probe or verify
 *    runs), the core finds the places again in its own write transaction and replaces them only
 *    when they are still the ones the person saw (else 409 preview-stale, nothing written); the
 *    redaction goes into the ledger of ops.sqlite (so no older copy brings the text back), then
 *    the WAL is checkpointed so no frame keeps the old text.
 *
 * The term and the reason are never logged; the scope's `redaction` table keeps who, when, why
 * and how many places, and the term only as its salted hash.
 */
import { Effect } from "effect"
import { CurrentCaller } from "../auth/caller.js"
import { operation } from "../auth/operation.js"
import {
  RedactionCreate,
  type RedactionCreated,
  RedactionPreviewRequest
} from "../contracts/redaction.js"
import { isDomainError } from "../contracts/errors.js"
import { nowInstant } from "../contracts/time.js"
import { withRedactionLock } from "../backup/lock.js"
import { writeTransaction } from "../db/connection.js"
import { OpsStore } from "../db/ops-store.js"
import { ScopeStore } from "../db/scope-store.js"
import { ReadPool } from "../read-pool/pool.js"
import { typeScriptExecArgv } from "../backup/worker-loader.js"
import { applyOnThread, type ThreadEntry, warmApplyThread } from "../redaction/apply-thread.js"
import { LexicalIndex } from "../search/lexical/index.js"
import { SearchStages } from "../search/stage.js"
import { recordInLedger } from "../redaction/ledger.js"
import { previewRedaction } from "../redaction/preview.js"

/** the apply thread's entry (from TypeScript source under vitest it transpiles with the backup worker's hooks) */
const THREAD: ThreadEntry = { sourceExecArgv: typeScriptExecArgv() }

/** The preview of `term` in `scope`, in one read transaction of the scope: the answer and the places with their ranges. */
export const previewTerm = (req: RedactionPreviewRequest) =>
  Effect.gen(function*() {
    // a confirmation may follow: its apply holds the scope's connection, and searches meanwhile
    // read in a worker, which is up by the time the person has read the preview (its first search,
    // in memory only, is for the term: the words the searches meanwhile will likely ask for)
    yield* Effect.flatMap(ReadPool, (pool) => pool.startWorkers([req.scope], req.term))
    // and the apply's thread loads its modules meanwhile
    yield* warmApplyThread(THREAD)
    const store = yield* ScopeStore
    return yield* store.read(req.scope, ({ sql }) => previewRedaction(sql, req.scope, req.term))
  })

/**
 * Applies the redaction the person confirmed: the core's one write transaction (preview-stale
 * when the places differ from `req.preview`), then the checkpoint.
 */
export const redactTerm = (req: RedactionCreate) =>
  Effect.gen(function*() {
    const store = yield* ScopeStore
    const ops = yield* OpsStore
    const caller = yield* CurrentCaller
    const { file, sql } = yield* store.use(req.scope)
    // the apply holds the scope's connection for seconds: searches meanwhile read in a worker
    yield* Effect.flatMap(ReadPool, (pool) => pool.startWorkers([req.scope]))
    // the backup lock around transaction, ledger and checkpoint: never a copy half way through
    const lexical = yield* LexicalIndex
    // the searches meanwhile read in the pool once this connection found the lexical build current
    // (else each would wait for the connection to check it: until the apply ends)
    if (!lexical.foundBuilt(sql)) yield* writeTransaction(sql)(lexical.ensureBuild(sql))
    return yield* withRedactionLock(Effect.gen(function*() {
      const at = yield* nowInstant
      // on a thread of its own, while this thread holds the scope's connection and answers requests
      const { applied, clean } = yield* applyOnThread(sql, file, {
        scope: req.scope, term: req.term, reason: req.reason.trim(), preview: req.preview,
        requestedBy: caller.grant.id, decidedBy: caller.identity.identity, at
      }, {
        entry: THREAD,
        lexical: lexical.options,
        // committed in the scope: a failed ledger write is mended when the scope opens next (the file's redaction is added)
        afterCommit: (applied) =>
          recordInLedger(ops, req.scope, applied).pipe(
            Effect.catchAll((e) =>
              Effect.logError("redaction ledger write failed").pipe(Effect.annotateLogs({ scope: req.scope, redaction: applied.redaction.id, cause: String(e) }))
            )
          )
      })
      const id = applied.redaction.id
      // stage b embeds the touched versions again (their vectors were deleted in the transaction)
      yield* Effect.flatMap(SearchStages, ({ vectors }) => (vectors === undefined ? Effect.void : vectors.wake(req.scope)))
      if (clean) return { id, scope: req.scope, total: applied.total } satisfies RedactionCreated
      // another process (Litestream) holds a read transaction: the old text stays in the WAL until
      // a checkpoint completes (the next redaction's, at the latest the next open); the answer says so
      yield* Effect.logWarning("redaction checkpoint incomplete").pipe(Effect.annotateLogs({ scope: req.scope, redaction: id }))
      return { id, scope: req.scope, total: applied.total, checkpointed: false } satisfies RedactionCreated
    })).pipe(
      // backup-running is a coded error of the contract (409) like every refusal here
      Effect.catchTag("BackupRunning", (e) => (isDomainError(e) ? Effect.fail(e) : Effect.die(e)))
    )
  })

export const previewRedactionOp = operation({
  name: "preview_redaction",
  right: "redact",
  input: RedactionPreviewRequest,
  label: "redaction preview",
  scopes: (req) => [req.scope],
  run: (req) => Effect.map(previewTerm(req), (p) => ({ status: 200, body: p.body, refs: p.body.rules }))
})

export const createRedactionOp = operation({
  name: "redact",
  right: "redact",
  input: RedactionCreate,
  label: "redaction",
  scopes: (req) => [req.scope],
  run: (req) => Effect.map(redactTerm(req), (created) => ({ status: 201, body: created, refs: [] }))
})
