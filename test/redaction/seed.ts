/**
 * A scope "sales" that names Petra Müller in every place a redaction reaches (gaps.md §12):
 * written through the product's writers where there is one (sources, proposals, decisions,
 * entities), by raw SQL where the writer belongs to a page or the pipeline (link, review,
 * classification, entity_override, search_log).
 */
import { Effect } from "effect"
import { ScopeStore } from "../../src/db/scope-store.js"
import { decide } from "../../src/decision/decide.js"
import { propose } from "../../src/domain/proposals.js"
import { storeSource } from "../../src/domain/sources.js"
import { createEntity } from "../../src/graph/entities.js"
import { jamieSource, mailProposal, mailSource } from "../support/fixtures.js"
import { sqlOf } from "../support/run.js"

export const NAME = "Petra Müller"
export const PHONE = "+49 171 5551234"
const AT = "2026-03-12T09:15:00Z"

export const MAIL_ID = "mail:<offer-2026@example.com>"
const MAIL_TEXT = [
  "Hallo zusammen,",
  "",
  "ab sofort gibt Petra Müller jeden Rabatt über zehn Prozent frei, erreichbar unter +49 171 5551234.",
  "",
  "Viele Grüße"
].join("\r\n")

const agent = { grantId: "person:1", channel: "mcp" as const }
const person = { grantId: "person:1", identity: "maria@example.com" }

/** Creates sales and ops and writes the places; answers nothing. */
export const seedScope = Effect.gen(function*() {
  const store = yield* ScopeStore
  yield* store.create("sales")
  yield* store.create("ops")
  yield* storeSource(mailSource(), "service:1")
  yield* storeSource(mailSource({
    source: {
      kind: "mail", id: MAIL_ID, title: `Angebot von ${NAME}`, occurred_at: "2026-03-12T09:15:00Z",
      sender: `${NAME} <petra.mueller@example.com>`, thread: null, link: "https://mail.example.com/m/2",
      auth: { from: `${NAME} <petra.mueller@example.com>`, authentication_results: "mx.example.com; spf=pass smtp.mailfrom=petra.mueller@example.com" }
    },
    text: MAIL_TEXT,
    attachments: [{ filename: "vertrag-petra-müller.pdf", media_type: "application/pdf", size: 10, external: null, text: `Vertrag mit ${NAME}`, text_origin: "ocr" }]
  }), "service:1")
  yield* storeSource(jamieSource({
    segments: [
      { start_s: 0, speaker: NAME, text: "Good morning, this is Petra Müller speaking." },
      { start_s: 100, speaker: "Tom", text: "Thanks Petra. Discounts above ten percent go through Frau Mueller." }
    ]
  }), "service:1")
  // sales-0001: from the mail, confirmed with a reason naming her
  yield* propose(mailProposal({
    statement: `${NAME} approves every discount above ten percent`,
    source: { kind: "mail", id: MAIL_ID, quote: "ab sofort gibt Petra Müller jeden Rabatt über zehn Prozent frei", link: null },
    speaker: NAME,
    relations: [{ kind: "customer", name: NAME, ref: null }],
    keywords: ["Rabatt", "Müller"]
  }), agent)
  yield* decide("sales-0001", { decision: "confirm", version: 1, reason: `checked with ${NAME}` }, person)
  // sales-0002: rejected (rejected_fts keeps its text)
  yield* propose(mailProposal({
    statement: `Discounts always need ${NAME} and the manager`,
    source: { kind: "mail", id: MAIL_ID, quote: "ab sofort gibt Petra Müller jeden Rabatt über zehn Prozent frei", link: null },
    speaker: null, relations: [], keywords: ["Rabatt"]
  }), agent)
  yield* decide("sales-0002", { decision: "reject", version: 1, reason: `${NAME} said this is wrong` }, person)
  // sales-0003: names nobody, cites another mail
  yield* propose(mailProposal(), agent)
  yield* createEntity({ scope: "sales", type: "department", name: NAME, parent_id: null, aliases: ["P. Müller"], evidence: `${NAME} signs the offers`, reason: `seen in the offer of ${NAME}` },
    { grantId: "service:1", channel: "api" })
  yield* createEntity({ scope: "sales", type: "department", name: "Einkauf", parent_id: null }, { grantId: "service:1", channel: "api" })
  const sql = yield* sqlOf("sales")
  yield* sql.withTransaction(Effect.gen(function*() {
    yield* sql`INSERT INTO link (seq, id, from_ref, to_ref, type, origin, confidence, reason, evidence, valid_from, created_at, created_by)
      VALUES (1, 'sales-l0001', 'rule/sales-0001', 'entity/sales-e0001', 'mentions', 'human', NULL, ${`named by ${NAME}`}, ${`${NAME} approves`}, ${AT}, ${AT}, 'person:1')`
    yield* sql`INSERT INTO review (seq, id, target, verdict, decided_by, decided_by_identity, decided_at, reason)
      VALUES (1, 'sales-r0001', 'link/sales-l0001', 'reject', 'person:1', 'maria@example.com', ${AT}, ${`${NAME} asked to drop it`})`
    yield* sql`INSERT INTO classification (rule_id, version, ruleset, class, exceptions, mode, outcome, reasons, day, daily_limit, classified_at)
      VALUES ('sales-0003', 1, 'default', 'general', '[]', 'manual', 'person', ${JSON.stringify([`mentions ${NAME}`])}, '2026-03-12', 5, ${AT})`
    yield* sql`INSERT INTO entity_override (id, version, n, candidate_id, name, type, status, aliases, path, score, match)
      VALUES ('sales-e0002', 1, 1, 'sales-e0001', ${NAME}, 'department', 'unconfirmed', ${JSON.stringify(["P. Müller"])}, ${JSON.stringify([NAME])}, 0.5, 'similar')`
    yield* sql`INSERT INTO search_log (id, at, grant_id, channel, operation, outcome, cross_scope, refs, terms, variants, stages, input_sha256)
      VALUES ('req-1', ${AT}, 'person:1', 'mcp', 'search', 200, 0, '[]', ${JSON.stringify(["petra", "müller"])},
        ${JSON.stringify({ "müller": ["mueller", "muller"] })}, '{}', NULL)`
  }))
}).pipe(Effect.orDie)
