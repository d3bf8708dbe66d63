import { Effect } from "effect"
import fc from "fast-check"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { ScopeStore, scopeFile } from "../../src/db/scope-store.js"
import { decide } from "../../src/decision/decide.js"
import { propose } from "../../src/domain/proposals.js"
import { normalizeQuote } from "../../src/domain/quote-check.js"
import { storeSource } from "../../src/domain/sources.js"
import { tempDir, testConfig } from "../support/env.js"
import { jamieSource, mailProposal, mailSource, manualProposal } from "../support/fixtures.js"
import { counts, fileHash, run, runFail, sqlOf } from "../support/run.js"

let dir: string
let cleanup: () => void
let config: ReturnType<typeof testConfig>
const agent = { grantId: "person:1", channel: "mcp" as const }
const person = { grantId: "person:1", identity: "maria@example.com" }

beforeEach(async () => {
  ;({ dir, cleanup } = tempDir())
  config = testConfig(dir)
  await run(config, Effect.gen(function*() {
    const store = yield* ScopeStore
    yield* store.create("sales")
    yield* store.create("ops")
    yield* storeSource(mailSource(), "service:1")
    yield* storeSource(jamieSource(), "service:1")
  }))
})
afterEach(() => cleanup())

describe("propose", () => {
  it("stores rule, version 1 proposed and its FTS row, and answers ProposalCreated", async () => {
    const created = await run(config, propose(mailProposal(), agent))
    expect(created).toEqual({
      ref: "rule/sales-0001@1", status: "proposed", quote_check: { checked: true }, possible_duplicates: [],
      approval_url: "http://127.0.0.1:8787/approval/rules/sales-0001",
      adoption: { kind: "person" }, valid: { from: "2026-03-12", until: null, in_force: false }, marking: "unconfirmed", exceptions: [], reasons: []
    })
    const rows = await run(config, Effect.gen(function*() {
      const sql = yield* sqlOf("sales")
      return {
        rule: yield* sql`SELECT * FROM rule`,
        version: yield* sql`SELECT * FROM rule_version`,
        fts: yield* sql`SELECT rowid, * FROM rule_fts`
      }
    }))
    expect(rows.rule[0]).toMatchObject({ seq: 1, id: "sales-0001", created_by: "person:1" })
    expect(rows.version[0]).toMatchObject({
      rule_id: "sales-0001", version: 1, status: "proposed", reason: "proposed via mcp", changed_by: "person:1",
      source_id: "mail:<order-rule@example.com>", timestamp_s: null, supersedes: null, valid_until: null,
      keywords: "[\"Lieferzeit\",\"Hakenleiste\"]"
    })
    expect(rows.fts[0]).toMatchObject({ rowid: 1, keywords: "Lieferzeit Hakenleiste", relations: "product Hakenleiste schwarz" })
  })

  it("checks a jamie quote within ±120 s of timestamp_s", async () => {
    const jamie = (timestamp_s: number) => mailProposal({
      source: {
        kind: "jamie", id: "jamie:meeting-2026-03-12", timestamp_s, link: "https://jamie.example.com/m/7",
        quote: "we always ask the supplier for the delivery time before ordering black hook rails"
      }
    })
    expect((await run(config, propose(jamie(160), agent))).quote_check.checked).toBe(true)
    expect((await runFail(config, propose(jamie(90), agent)))._tag).toBe("QuoteNotFound")
    const rows = await run(config, Effect.flatMap(sqlOf("sales"), (sql) => sql`SELECT timestamp_s, source_link FROM rule_version`))
    expect(rows).toEqual([{ timestamp_s: 160, source_link: "https://jamie.example.com/m/7" }])
  })

  it("does not check a manual quote and creates one manual source per grant on first use", async () => {
    const a = await run(config, propose(manualProposal("Manual rule number one here"), agent))
    await run(config, propose(manualProposal("Manual rule number two here"), agent))
    await run(config, propose(manualProposal("Manual rule of another grant"), { grantId: "person:2", channel: "mcp" }))
    expect(a.quote_check).toEqual({ checked: false })
    const sources = await run(config, Effect.flatMap(sqlOf("sales"), (sql) =>
      sql`SELECT id, feeder, kind FROM source WHERE kind = 'manual' ORDER BY id`))
    expect(sources).toEqual([
      { id: "manual:person:1", feeder: "person:1", kind: "manual" },
      { id: "manual:person:2", feeder: "person:2", kind: "manual" }
    ])
  })

  it("checks in order: source-unknown before quote-not-found before reference-unknown", async () => {
    const unknownSource = mailProposal({
      source: { kind: "mail", id: "mail:<nope@x>", quote: "not in the mail at all, surely not", link: null },
      supersedes: "sales-0099"
    })
    expect((await runFail(config, propose(unknownSource, agent)))._tag).toBe("SourceUnknown")
    const badQuote = mailProposal({
      source: { kind: "mail", id: "mail:<order-rule@example.com>", quote: "not in the mail at all, surely not", link: null },
      supersedes: "sales-0099"
    })
    expect((await runFail(config, propose(badQuote, agent)))._tag).toBe("QuoteNotFound")
    expect((await runFail(config, propose(mailProposal({ supersedes: "sales-0099" }), agent)))._tag).toBe("ReferenceUnknown")
  })

  it("a jamie id that names a mail is source-unknown", async () => {
    const wrongKind = mailProposal({
      source: { kind: "jamie", id: "jamie:nope", timestamp_s: 0, quote: "Good morning everyone, let's start.", link: "https://j/1" }
    })
    expect((await runFail(config, propose(wrongKind, agent)))._tag).toBe("SourceUnknown")
  })

  it("supersedes must name a confirmed rule of the same scope", async () => {
    await run(config, propose(mailProposal(), agent))
    const proposedOnly = await runFail(config, propose(mailProposal({ supersedes: "sales-0001" }), agent))
    expect(proposedOnly._tag).toBe("ReferenceUnknown")
    await run(config, decide("sales-0001", { decision: "confirm", version: 1 }, person))
    const ok = await run(config, propose(mailProposal({ supersedes: "sales-0001" }), agent))
    expect(ok.ref).toBe("rule/sales-0002@1")
    expect((await runFail(config, propose(mailProposal({ supersedes: "ops-0001" }), agent)))._tag).toBe("ReferenceUnknown")
  })

  it("a refused proposal leaves the file byte-for-byte as it was", async () => {
    await run(config, propose(mailProposal(), agent))
    const file = scopeFile(dir, "sales")
    const before = { hash: fileHash(file), counts: await run(config, Effect.flatMap(sqlOf("sales"), counts)) }
    const bad = mailProposal({ source: { kind: "mail", id: "mail:<order-rule@example.com>", quote: "this sentence is not in the mail", link: null } })
    await runFail(config, propose(bad, agent))
    await runFail(config, propose(mailProposal({ supersedes: "sales-0001" }), agent))
    expect(await run(config, Effect.flatMap(sqlOf("sales"), counts))).toEqual(before.counts)
    expect(fileHash(file)).toBe(before.hash)
  })

  it("possible_duplicates: top 3 by bm25 in the same scope, proposals included, the new rule excluded", async () => {
    await run(config, propose(mailProposal(), agent))
    await run(config, propose(manualProposal("Always ask the supplier for the delivery time of black hook rails", { keywords: ["Lieferzeit"] }), agent))
    await run(config, propose(manualProposal("Payment terms of Müller GmbH are 30 days net", { keywords: ["Zahlung"], relations: [] }), agent))
    await run(config, propose(manualProposal("Invoices go to accounting by Friday noon", { keywords: ["Rechnung"], relations: [] }), agent))
    await run(config, propose(manualProposal("Ask the supplier for the delivery time before ordering black hook rails", { scope: "ops" }), agent))
    const created = await run(config, propose(manualProposal("Before ordering hook rails ask for the delivery time", { keywords: ["Lieferzeit"] }), agent))
    expect(created.ref).toBe("rule/sales-0005@1")
    expect(created.possible_duplicates.slice(0, 2).sort()).toEqual(["rule/sales-0001@1", "rule/sales-0002@1"])
    expect(created.possible_duplicates).not.toContain("rule/sales-0005@1")
    expect(created.possible_duplicates.every((r) => r.startsWith("rule/sales-"))).toBe(true)
    expect(created.possible_duplicates.length).toBeLessThanOrEqual(3)
  })

  it("user text with FTS5 syntax never breaks the duplicate query", async () => {
    await run(config, propose(mailProposal(), agent))
    const created = await run(config, propose(manualProposal("\"NEAR(a b)\" OR * - : ( ) AND NOT hook rails\"", { keywords: ["a\"b", "c*"] }), agent))
    expect(created.possible_duplicates).toEqual(["rule/sales-0001@1"])
  })
})

describe("property: any substring of ≥ 20 normalized characters of a stored mail is found by propose", () => {
  it("holds for random mails stored through storeSource", async () => {
    const pieces = fc.constantFrom("Lieferzeit", "Hakenleiste", "„Zitat“", "–", "—", "\r\n", "\n", " ", "ﬁ", "Ä", "ß", "(RAL 9005)", "…", "'", "e-mail", "30 Tage", "€")
    let n = 0
    await fc.assert(fc.asyncProperty(fc.array(pieces, { minLength: 12, maxLength: 60 }), fc.nat(), fc.nat(), async (parts, a, b) => {
      const text = parts.join(" ")
      const norm = [...normalizeQuote(text)]
      fc.pre(norm.length >= 20)
      const len = 20 + (b % Math.min(norm.length - 19, 200))
      const start = a % (norm.length - len + 1)
      const quote = norm.slice(start, start + len).join("").trim()
      fc.pre([...quote].length >= 20)
      n += 1
      const id = `mail:<prop-${n}@example.com>`
      const created = await run(config, Effect.gen(function*() {
        yield* storeSource(mailSource({ text, source: { ...mailSource().source, id } as never, attachments: [] }), "service:1")
        return yield* propose(mailProposal({ source: { kind: "mail", id, quote, link: null } }), agent)
      }))
      return created.quote_check.checked
    }), { numRuns: 40 })
  }, 60_000)
})
