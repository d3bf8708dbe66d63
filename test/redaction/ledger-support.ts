/**
 * The redaction ledger's tests: a scope that names one person in a mail, its title and a rule
 * quoting it; a redaction of the name as the operation makes it (preview, apply, ledger,
 * checkpoint); and the raw bytes of files, searched for the name.
 */
import { existsSync, readFileSync } from "node:fs"
import { Effect } from "effect"
import { OpsStore } from "../../src/db/ops-store.js"
import { ScopeStore } from "../../src/db/scope-store.js"
import { decide } from "../../src/decision/decide.js"
import { propose } from "../../src/domain/proposals.js"
import { storeSource } from "../../src/domain/sources.js"
import { applyRedaction, checkpointAfterRedaction } from "../../src/redaction/apply.js"
import { recordInLedger } from "../../src/redaction/ledger.js"
import { previewRedaction } from "../../src/redaction/preview.js"
import { mailProposal, mailSource } from "../support/fixtures.js"
import { sqlOf } from "../support/run.js"

/** A surname found nowhere else in a scope file (nor in its FTS or lexical tokens). */
export const TERM = "Quirinewski"
export const MAIL_ID = "mail:<angebot-2026-17@example.com>"
const AT = "2026-03-12T09:15:00Z"
const QUOTE = `ab sofort gibt Herr ${TERM} jeden Rabatt über zehn Prozent frei`

/** Creates `scope` and stores the mail naming the person and a confirmed rule quoting it (`scope`-0001). */
export const seedNamed = (scope = "sales") =>
  Effect.gen(function*() {
    const store = yield* ScopeStore
    yield* store.create(scope)
    const base = mailSource({ scope }, MAIL_ID)
    yield* storeSource({
      ...base,
      source: { ...base.source, title: `Angebot von Herrn ${TERM}` },
      text: `Hallo zusammen,\r\n\r\n${QUOTE}.\r\n\r\nViele Grüße`,
      attachments: []
    }, "service:1")
    yield* propose(mailProposal({
      scope,
      statement: `Herr ${TERM} approves every discount above ten percent`,
      source: { kind: "mail", id: MAIL_ID, quote: QUOTE, link: null },
      speaker: null,
      relations: [],
      keywords: ["Rabatt"]
    }), { grantId: "person:1", channel: "mcp" })
    yield* decide(`${scope}-0001`, { decision: "confirm", version: 1 }, { grantId: "person:2", identity: "anna@example.com" })
  }).pipe(Effect.orDie)

/**
 * A redaction of `term` as the operation makes it: preview, apply, the ledger (unless `ledger` is
 * false), the checkpoint (unless `checkpoint` is false).
 */
export const redactTerm = (term: string, scope = "sales", ledger = true, checkpoint = true) =>
  Effect.gen(function*() {
    const sql = yield* sqlOf(scope)
    const preview = yield* previewRedaction(sql, scope, term)
    const applied = yield* applyRedaction(sql, {
      scope, term, reason: "erasure request 2026-17", preview: preview.body.preview,
      requestedBy: "person:1", decidedBy: "dpo@example.com", at: AT
    })
    if (ledger) yield* recordInLedger(yield* OpsStore, scope, applied)
    if (checkpoint) yield* checkpointAfterRedaction(sql)
    return applied
  }).pipe(Effect.orDie)

/**
 * The files among `files` whose bytes hold `term`: as UTF-8, lowercased, and the stem a token
 * index keeps (the term without its last letter, lowercased).
 */
export const filesHolding = (files: ReadonlyArray<string>, term: string): Array<string> => {
  const needles = [term, term.toLowerCase(), term.slice(0, -1).toLowerCase()].map((t) => Buffer.from(t, "utf8"))
  return files.filter((f) => {
    if (!existsSync(f)) return false
    const bytes = readFileSync(f)
    const lower = Buffer.from(bytes.toString("latin1").toLowerCase(), "latin1")
    return needles.some((n) => bytes.includes(n) || lower.includes(n))
  })
}

/** A file and its -wal. */
export const withWal = (file: string): Array<string> => [file, `${file}-wal`]
