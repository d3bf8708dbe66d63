/**
 * Random sequences of writes on the scope sales of cache-support.ts and questions beside them, for
 * the tests that compare what a search keeps per connection with a search reading everything from
 * the file (carry-random.test.ts on the connection that wrote; test/read-pool/carry-random.test.ts
 * in the read pool's workers). The writes are a person's and an agent's: proposals (new words,
 * compounds, inflections, supersessions; some refused after their rows and their duplicate check
 * were written, so rolled back), confirmations (some with a changed statement), rejections,
 * revocations, reviews with new keywords and redactions; the questions are words asked before
 * (their rows held and carried), words a write brought or took away, inflections, typos, starts of
 * words and words no rule holds. A seed gives the same sequence every time.
 */
import { Effect } from "effect"
import { expect } from "vitest"
import { ScopeStore } from "../../src/db/scope-store.js"
import { decide } from "../../src/decision/decide.js"
import type { DecisionRequest } from "../../src/domain/decision-schemas.js"
import { insertProposal, propose } from "../../src/domain/proposals.js"
import { applyRedaction } from "../../src/redaction/apply.js"
import { previewRedaction } from "../../src/redaction/preview.js"
import { manualProposal } from "../support/fixtures.js"
import type { Stores } from "../support/run.js"
import { sqlOf } from "../support/run.js"
import { agent, person, SALES_RULES } from "./cache-support.js"

/** German and English words of a sales scope: compounds, inflections, umlauts, words the lexicon knows. */
const WORDS = [
  "Rechnung", "Rechnungen", "Skonto", "Lieferzeit", "Lieferzeiten", "Hakenleiste", "Hakenleisten", "Zahlungsziel", "Zahlungsfrist",
  "Kunde", "Kunden", "Neukunden", "Lieferant", "Lieferanten", "Bestellung", "Prüfung", "Rechnungsprüfung", "Gutschrift", "Rabatt",
  "Preisliste", "Muster", "Lager", "Palette", "Versand", "Mahnung", "Vorkasse", "Anzahlung", "Angebot", "Auftrag", "Reklamation",
  "invoice", "invoices", "discount", "customer", "customers", "client", "supplier", "delivery", "payment", "terms", "order", "orders",
  "sample", "warehouse", "pallet", "shipping", "credit", "note", "price", "list", "quote", "approval"
]
const FILLER = ["werden", "innerhalb", "von", "Tagen", "bezahlt", "immer", "nur", "nach", "the", "are", "within", "days", "paid", "only", "after"]

/** A seeded generator (mulberry32): the same seed gives the same sequence. */
export const generator = (seed: number) => {
  let a = seed >>> 0
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (n: number): number => Math.floor(next() * n)
  const pick = <T>(xs: ReadonlyArray<T>): T => xs[int(xs.length)] as T
  return { next, int, pick }
}

type Rule = { readonly id: string; version: number; status: "proposed" | "confirmed" | "gone" }

/** Runs a write with the services of the store under test. */
export type Writer = <A, E>(effect: Effect.Effect<A, E, Stores>) => Promise<A>

/**
 * The writes and questions of one seed on the scope sales (written from SALES_RULES); `days`: the
 * writer's today and instant (a revocation ends the day before today).
 */
export const randomWrites = (seed: number, write: Writer, days: { readonly today: string; readonly yesterday: string; readonly now: string }) => {
  const g = generator(seed)
  const rules: Array<Rule> = SALES_RULES.map((_, i) => ({ id: `sales-${String(i + 1).padStart(4, "0")}`, version: 2, status: "confirmed" }))
  let seq = rules.length
  const written: Array<string> = []
  const asked: Array<string> = []
  const sentence = (): string => {
    const words = Array.from({ length: 3 + g.int(4) }, () => (g.next() < 0.6 ? g.pick(WORDS) : g.pick(FILLER)))
    // now and then a word no rule held before
    if (g.next() < 0.4) words.push(`Zusatz${["pfahl", "teil", "leiste", "frist"][g.int(4)]}${g.int(50)}`)
    return words.join(" ")
  }
  /** a decision; a successor whose predecessor is no longer confirmed is refused (ReferenceUnknown) and changes nothing */
  const decideOn = (rule: Rule, req: DecisionRequest) =>
    write(decide(rule.id, req, person).pipe(Effect.as(""), Effect.catchTag("ReferenceUnknown", () => Effect.succeed(": refused, its predecessor is gone"))))
  /** each rule's current version and status, as the file has them (a confirmed successor supersedes its predecessor) */
  const refresh = async () => {
    for (const r of rules) {
      const rows = await write(Effect.flatMap(sqlOf("sales"), (sql) => sql<{ status: string; version: number }>`SELECT status, version FROM current_version WHERE rule_id = ${r.id}`))
      const row = rows[0]
      if (row === undefined) continue
      r.version = row.version
      r.status = row.status === "confirmed" ? "confirmed" : row.status === "proposed" ? "proposed" : "gone"
    }
  }
  /** the next question: one asked before, or one to three words (typos, starts of words) */
  const question = (): string => {
    const text = g.next() < 0.3 && asked.length > 0 ? g.pick(asked) : Array.from({ length: 1 + g.int(3) }, () => {
      const w = g.next() < 0.5 && written.length > 0 ? g.pick(g.pick(written).split(" ")) : g.pick(WORDS)
      const k = g.next()
      // a typo (one letter dropped), a start of the word, or the word itself
      if (k < 0.15 && w.length > 5) return w.slice(0, 2) + w.slice(3)
      if (k < 0.3 && w.length > 5) return w.slice(0, 4 + g.int(2))
      return w
    }).join(" ")
    asked.push(text)
    return text
  }
  /** the next write; what it did, in words */
  const step = async (): Promise<string> => {
    const open = rules.filter((r) => r.status === "proposed")
    const confirmed = rules.filter((r) => r.status === "confirmed")
    const k = g.next()
    let done: string
      if (k < 0.08) {
        // a proposal written, its duplicate check searched inside the write, then the write refused: all rolled back
        const statement = sentence()
        const refused = await write(Effect.flatMap(ScopeStore, (store) =>
          store.write("sales", ({ sql }) =>
            insertProposal(sql, manualProposal(statement, { keywords: [g.pick(WORDS)], relations: [] }), agent, { now: days.now, today: days.today }).pipe(
              Effect.zipRight(Effect.fail("refused" as const))
            ))).pipe(Effect.flip))
        expect(refused).toBe("refused")
        done = `propose "${statement}", refused after its rows were written`
      } else if (k < 0.35 || (open.length === 0 && confirmed.length === 0)) {
        const statement = sentence()
        const replaces = g.next() < 0.2 && confirmed.length > 0 ? g.pick(confirmed).id : null
        await write(propose(manualProposal(statement, { keywords: [g.pick(WORDS), g.pick(WORDS)], relations: [], supersedes: replaces }), agent))
        rules.push({ id: `sales-${String(++seq).padStart(4, "0")}`, version: 1, status: "proposed" })
        written.push(statement)
        done = `propose "${statement}"${replaces === null ? "" : ` replacing ${replaces}`}`
      } else if (k < 0.55 && open.length > 0) {
        const rule = g.pick(open)
        if (g.next() < 0.3) {
          const statement = sentence()
          written.push(statement)
          done = `confirm ${rule.id} as "${statement}"`
          done += await decideOn(rule, { decision: "confirm", version: rule.version, change: { statement } })
        } else {
          done = `confirm ${rule.id}`
          done += await decideOn(rule, { decision: "confirm", version: rule.version })
        }
      } else if (k < 0.65 && open.length > 0) {
        const rule = g.pick(open)
        done = `reject ${rule.id}`
        await decideOn(rule, { decision: "reject", version: rule.version, reason: "not a rule" })
      } else if (k < 0.75 && confirmed.length > 0) {
        const rule = g.pick(confirmed)
        done = `revoke ${rule.id}`
        await decideOn(rule, { decision: "revoke", version: rule.version, reason: "no longer so", valid_until: days.yesterday })
      } else if (k < 0.9 && confirmed.length > 0) {
        const rule = g.pick(confirmed)
        const keywords = [g.pick(WORDS), `Stichwort${g.int(20)}`]
        done = `review ${rule.id} with keywords ${keywords.join(", ")}`
        await decideOn(rule, { decision: "review", version: rule.version, change: { keywords } })
      } else {
        const term = g.pick(written.length > 0 && g.next() < 0.5 ? g.pick(written).split(" ").filter((w) => w.length > 4) : ["Skonto", "Rechnung", "Kunden"]) ?? "Skonto"
        const applied = await write(Effect.gen(function*() {
          const sql = yield* sqlOf("sales")
          const p = yield* previewRedaction(sql, "sales", term)
          yield* applyRedaction(sql, {
            scope: "sales", term, reason: "erasure request", preview: p.body.preview, requestedBy: "person:1",
            decidedBy: "dpo@example.com", at: days.now
          })
          return true
        }).pipe(Effect.catchTag("PreviewStale", () => Effect.succeed(false))))
        done = applied ? `redact "${term}"` : `redact "${term}": nowhere`
      }
    await refresh()
    return done
  }
  return { step, question }
}
