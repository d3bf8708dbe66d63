/**
 * Bundles on real SQLite (architecture.md §8): fixtures are written with the real writers
 * (storeSource, propose, decide); writes run on a TestClock fixed at a chosen instant, so
 * created_at and decided_at — and with them last_reviewed_at and age_days — are known.
 */
import { Effect, TestClock, TestContext } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { ScopeStore } from "../../src/db/scope-store.js"
import { decide } from "../../src/decision/decide.js"
import type { ProposalRequest } from "../../src/domain/proposal-schemas.js"
import { propose } from "../../src/domain/proposals.js"
import type { RuleVersionRow } from "../../src/domain/rules.js"
import type { Relation } from "../../src/contracts/schemas.js"
import type { SourceRequest } from "../../src/domain/source-schemas.js"
import { storeSource } from "../../src/domain/sources.js"
import { createEntity } from "../../src/graph/entities.js"
import { proposeLink } from "../../src/graph/links.js"
import { ageDays, type BundleOptions, buildBundle, chooseReadVersion, readBundle } from "../../src/search/bundle.js"
import { archiveEntity } from "../../src/structure/archive.js"
import { applyReview } from "../../src/structure/review.js"
import { insertLinkRow } from "../graph/link-fixtures.js"
import { tempDir, testConfig } from "../support/env.js"
import { jamieSource, MAIL_TEXT, mailProposal, mailSource, manualProposal } from "../support/fixtures.js"
import { run, type Stores, sqlOf } from "../support/run.js"

let dir: string
let cleanup: () => void
let config: ReturnType<typeof testConfig>
const agent = { grantId: "person:1", channel: "mcp" as const }
const person = { grantId: "person:2", identity: "anna@example.com" }
const ZONE = "Europe/Berlin"
const DAY_MS = 86_400_000
const T0 = Date.parse("2026-03-20T10:00:00Z")

/** Runs an effect with Effect's clock fixed at `ms`. */
const at = <A, E>(ms: number, effect: Effect.Effect<A, E, Stores>) =>
  run(config, Effect.gen(function*() {
    yield* TestClock.setTime(ms)
    return yield* effect
  }).pipe(Effect.provide(TestContext.TestContext)))

const write = <A, E>(effect: Effect.Effect<A, E, Stores>) => at(T0, effect)

const confirm = (ruleId: string, ms = T0) => at(ms, decide(ruleId, { decision: "confirm", version: 1 }, person))

const current = (ruleId: string) =>
  Effect.flatMap(sqlOf("sales"), (sql) =>
    Effect.map(sql<RuleVersionRow>`SELECT * FROM current_version WHERE rule_id = ${ruleId}`, (rows) => {
      const row = rows[0]
      if (row === undefined) throw new Error(`no rule ${ruleId}`)
      return row
    }))

const options = (over: Partial<BundleOptions> = {}): BundleOptions => ({
  zone: ZONE, recheckAfterDays: 180, nowMs: T0, targetDay: "2026-03-20", includeProposals: false, ...over
})

const bundleOf = (ruleId: string, over: Partial<BundleOptions> = {}) =>
  run(config, Effect.gen(function*() {
    const sql = yield* sqlOf("sales")
    const version = yield* current(ruleId)
    return yield* buildBundle(sql, {
      version, scope: "sales", rank: { a: 1.5, b: null, rrf: null, reranker: null },
      found_via: ["hakenleiste"], coverage: 0.5, matched_terms: 1
    }, options(over))
  }))

const long = (label: string) => `${label} ${"x".repeat(400)}`

const mailIn = (id: string, thread: string | null, occurredAt: string, text: string, attachments: SourceRequest["attachments"] = []) =>
  mailSource({
    source: {
      kind: "mail", id, title: `Re: ${id}`, occurred_at: occurredAt, sender: "tom@example.com", thread,
      link: `https://mail.example.com/${encodeURIComponent(id)}`
    },
    text,
    attachments
  }, id)

const attachment = (i: number, read: boolean): SourceRequest["attachments"][number] => ({
  filename: `file-${i}.pdf`, media_type: "application/pdf", size: 10 * i, external: null,
  text: read ? (i === 1 ? long("page one") : `text ${i}`) : null, text_origin: read ? "ocr" : null
})

const jamieProposal = (over: Partial<ProposalRequest> = {}): ProposalRequest => ({
  ...mailProposal(),
  source: {
    kind: "jamie", id: "jamie:meeting-2026-03-12",
    quote: "we always ask the supplier for the delivery time before ordering black hook rails",
    timestamp_s: 100, link: "https://jamie.example.com/m/7?t=100"
  },
  said_at: "2026-03-12T10:00:00Z",
  relations: [],
  ...over
})

beforeEach(async () => {
  ;({ dir, cleanup } = tempDir())
  config = testConfig(dir)
  await run(config, Effect.flatMap(ScopeStore, (store) => store.create("sales")))
})
afterEach(() => cleanup())

describe("head", () => {
  it("is the matched version: ref with @n, date = said_at, title = statement, excerpt = full quote, source and rank", async () => {
    await write(Effect.all([storeSource(jamieSource({
      attachments: [attachment(2, true), attachment(3, true)]
    }), "service:1"), propose(jamieProposal({ speaker: "Maria" }), agent)]))
    await confirm("sales-0001")
    const b = await bundleOf("sales-0001")
    expect(b.head).toEqual({
      ref: "rule/sales-0001@2", kind: "rule", date: "2026-03-12T10:00:00Z",
      title: "Ask the supplier for the delivery time before ordering black hook rails",
      excerpt: "we always ask the supplier for the delivery time before ordering black hook rails",
      link: "https://jamie.example.com/m/7?t=100",
      scope: "sales", status: "confirmed", unconfirmed: false, valid_from: "2026-03-12", valid_until: null,
      superseded_by: null, last_reviewed_at: new Date(T0).toISOString(), adoption: { kind: "person" }, age_days: 0, recheck: null,
      source: {
        kind: "jamie", id: "jamie:meeting-2026-03-12",
        quote: "we always ask the supplier for the delivery time before ordering black hook rails",
        timestamp: "1:40", link: "https://jamie.example.com/m/7?t=100"
      },
      speaker: "Maria", relations: [], rank: { a: 1.5, b: null, rrf: null, reranker: null },
      found_via: ["hakenleiste"], coverage: 0.5, matched_terms: 1, entities: []
    })
  })

  it("the §8 example comes out byte for byte: a meeting with 2 attachments, last reviewed 220 days ago", async () => {
    await write(Effect.all([storeSource(jamieSource({
      attachments: [attachment(2, true), attachment(3, true)]
    }), "service:1"), propose(jamieProposal(), agent)]))
    await confirm("sales-0001")
    const b = await bundleOf("sales-0001", { nowMs: T0 + 220 * DAY_MS })
    expect(b.line).toBe(
      "Rule from 2026-03-12: Ask the supplier for the delivery time before ordering black hook rails — with 1 meeting, 2 attachments; last reviewed 220 days ago, still valid?"
    )
    expect(b.groups.map((g) => g.kind)).toEqual(["source", "attachment"])
    const source = b.groups[0]
    expect(source).toEqual({
      kind: "source", count: 1, more: 0,
      entries: [{
        ref: "source/jamie:meeting-2026-03-12", kind: "meeting", date: "2026-03-12T10:00:00Z", title: "Weekly sales",
        excerpt: "Good morning everyone, let's start. From now on we always ask the supplier for the delivery time before ordering black hook rails. Agreed, next topic is the payment terms for Müller GmbH.",
        link: "https://jamie.example.com/m/7", origin: "deterministic", proposed: false
      }]
    })
  })

  it("age_days counts calendar days in the zone; recheck exactly past recheck_after_days, only for confirmed heads", async () => {
    // decided 2026-03-20 23:30 UTC = 2026-03-21 00:30 in Berlin
    const decidedAt = Date.parse("2026-03-20T23:30:00Z")
    await write(Effect.all([storeSource(mailSource(), "service:1"), propose(mailProposal(), agent)]))
    await confirm("sales-0001", decidedAt)
    const berlinDay = Date.parse("2026-03-21T22:59:00Z") // 23:59 in Berlin, the same day
    expect((await bundleOf("sales-0001", { nowMs: berlinDay })).head.age_days).toBe(0)
    expect((await bundleOf("sales-0001", { nowMs: berlinDay + 2 * 60_000 })).head.age_days).toBe(1)

    const day180 = Date.parse("2026-09-17T10:00:00Z") // 180 calendar days after 2026-03-21
    const h180 = (await bundleOf("sales-0001", { nowMs: day180 })).head
    expect([h180.age_days, h180.recheck]).toEqual([180, null])
    const b181 = await bundleOf("sales-0001", { nowMs: day180 + DAY_MS })
    expect([b181.head.age_days, b181.head.recheck]).toEqual([181, "still valid?"])
    expect(b181.line.endsWith("; last reviewed 181 days ago, still valid?")).toBe(true)
    const h30 = (await bundleOf("sales-0001", { nowMs: Date.parse("2026-04-21T10:00:00Z"), recheckAfterDays: 30 })).head
    expect([h30.age_days, h30.recheck]).toEqual([31, "still valid?"])
    expect(ageDays("2026-03-20T23:30:00Z", ZONE, Date.parse("2026-03-19T10:00:00Z"))).toBe(0)
  })

  it("a proposal is unconfirmed, never rechecked, and its line says how long it waits", async () => {
    await write(Effect.all([storeSource(mailSource(), "service:1"), propose(mailProposal(), agent)]))
    const b = await bundleOf("sales-0001", { nowMs: T0 + 400 * DAY_MS })
    expect(b.head).toMatchObject({ status: "proposed", unconfirmed: true, age_days: 400, recheck: null, last_reviewed_at: new Date(T0).toISOString() })
    expect(b.line).toBe(
      "Unconfirmed rule from 2026-03-12: Ask the supplier for the delivery time before ordering black hook rails — with 1 mail, 2 attachments (1 unread); proposed 400 days ago, not confirmed"
    )
  })

  it("a superseded head is labelled, names its successor and is never rechecked", async () => {
    await write(Effect.all([storeSource(mailSource(), "service:1"), propose(mailProposal(), agent)]))
    await confirm("sales-0001")
    await write(propose(manualProposal("From April on the delivery time is asked by phone", {
      supersedes: "sales-0001", valid_from: "2026-04-01", said_at: "2026-03-19T08:00:00Z", relations: []
    }), agent))
    await confirm("sales-0002")
    const old = await bundleOf("sales-0001", { nowMs: T0 + 300 * DAY_MS })
    expect(old.head).toMatchObject({ ref: "rule/sales-0001@3", status: "superseded", valid_until: "2026-04-01", superseded_by: "sales-0002", recheck: null })
    expect(old.groups.map((g) => g.kind)).toEqual(["source", "attachment", "successor"])
    expect(old.groups[2]?.entries).toEqual([{
      ref: "rule/sales-0002@2", kind: "rule", date: "2026-03-19T08:00:00Z", title: "From April on the delivery time is asked by phone",
      excerpt: "said in the hallway", link: null, origin: "deterministic", proposed: false
    }])
    expect(old.line).toBe(
      "Superseded rule from 2026-03-12: Ask the supplier for the delivery time before ordering black hook rails — with 1 mail, 2 attachments (1 unread), superseded by sales-0002; last reviewed 300 days ago"
    )
    const successor = await bundleOf("sales-0002")
    // a manual source has no source group
    expect(successor.groups.map((g) => g.kind)).toEqual(["predecessor"])
    expect(successor.groups[0]).toMatchObject({ count: 1, more: 0, entries: [{ ref: "rule/sales-0001@3", kind: "rule", date: "2026-03-12T09:15:00Z" }] })
    expect(successor.head.source).toEqual({ kind: "manual", id: "manual:person:1", quote: "said in the hallway", timestamp: null, link: null })
    expect(successor.line).toBe("Rule from 2026-03-19: From April on the delivery time is asked by phone — with replaces sales-0001; last reviewed 0 days ago")
  })

  it("a note reads Note; a proposed note Unconfirmed note", async () => {
    await write(Effect.all([storeSource(mailSource(), "service:1"), propose(mailProposal({ kind: "note" }), agent)]))
    expect((await bundleOf("sales-0001")).line.startsWith("Unconfirmed note from 2026-03-12: ")).toBe(true)
    await confirm("sales-0001")
    expect((await bundleOf("sales-0001")).line.startsWith("Note from 2026-03-12: ")).toBe(true)
  })
})

describe("source, thread and attachment groups", () => {
  const ROOT = "mail:<root@example.com>"
  const HEAD = "mail:<head@example.com>"

  beforeEach(async () => {
    const replies = Array.from({ length: 6 }, (_, i) =>
      mailIn(`mail:<reply-${i + 1}@example.com>`, ROOT, `2026-03-1${i + 3}T08:00:00Z`, long(`reply ${i + 1}`)))
    await write(Effect.all([
      storeSource(mailIn(ROOT, null, "2026-03-10T08:00:00Z", long("root")), "service:1"),
      storeSource(mailIn(HEAD, ROOT, "2026-03-12T09:15:00Z", MAIL_TEXT,
        Array.from({ length: 7 }, (_, i) => attachment(i + 1, i !== 2 && i !== 6))), "service:1"),
      ...replies.map((r) => storeSource(r, "service:1")),
      storeSource(mailIn("mail:<elsewhere@example.com>", null, "2026-03-15T08:00:00Z", "another thread"), "service:1"),
      propose(mailProposal({ source: { ...mailProposal().source, id: HEAD } as ProposalRequest["source"] }), agent)
    ], { concurrency: 1 }))
  })

  it("source is the mail itself; thread = the other mails of the thread, newest 5 with more; excerpts cut at 300 with …", async () => {
    const b = await bundleOf("sales-0001")
    expect(b.groups.map((g) => g.kind)).toEqual(["source", "thread", "attachment"])
    expect(b.groups[0]).toMatchObject({
      count: 1, more: 0,
      entries: [{ ref: `source/${HEAD}`, kind: "mail", date: "2026-03-12T09:15:00Z", title: `Re: ${HEAD}`, excerpt: MAIL_TEXT }]
    })
    const thread = b.groups[1]
    expect(thread?.count).toBe(7)
    expect(thread?.more).toBe(2)
    expect(thread?.entries.map((e) => e.ref)).toEqual([6, 5, 4, 3, 2].map((i) => `source/mail:<reply-${i}@example.com>`))
    for (const e of thread?.entries ?? []) {
      expect(e.kind).toBe("mail")
      expect([...(e.excerpt ?? "")].length).toBe(300)
      expect(e.excerpt?.endsWith("x…")).toBe(true)
      expect(e).toMatchObject({ origin: "deterministic", proposed: false })
    }
  })

  it("a reply sees the root in its thread; the root sees its replies", async () => {
    await write(propose(mailProposal({
      source: { kind: "mail", id: "mail:<reply-1@example.com>", quote: "reply 1 xxxxxxxxxxxxxxxxxxxxxxxxxx", link: null },
      relations: []
    }), agent))
    const b = await bundleOf("sales-0002")
    expect(b.groups[1]).toMatchObject({ kind: "thread", count: 7, more: 2 })
    expect(b.groups[1]?.entries.map((e) => e.ref)).toEqual(
      ["source/mail:<reply-6@example.com>", "source/mail:<reply-5@example.com>", "source/mail:<reply-4@example.com>",
        "source/mail:<reply-3@example.com>", "source/mail:<reply-2@example.com>"]
    )
    await write(propose(mailProposal({
      source: { kind: "mail", id: ROOT, quote: "root xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", link: null },
      relations: []
    }), agent))
    const root = await bundleOf("sales-0003")
    expect(root.groups[1]).toMatchObject({ kind: "thread", count: 7, more: 2 })
    expect(root.groups[1]?.entries.map((e) => e.ref)).not.toContain(`source/${ROOT}`)
    expect(root.groups.map((g) => g.kind)).toEqual(["source", "thread"])
    expect(root.line).toContain(" — with 1 mail, 7 mails in thread; ")
  })

  it("attachments: first 5 by position with more, filename as title, text start as excerpt, unread counted over all", async () => {
    const b = await bundleOf("sales-0001")
    const g = b.groups[2]
    expect(g).toMatchObject({ kind: "attachment", count: 7, more: 2 })
    expect(g?.entries.map((e) => [e.ref, e.title])).toEqual(
      [1, 2, 3, 4, 5].map((n) => [`attachment/${HEAD}#${n}`, `file-${n}.pdf`])
    )
    expect(g?.entries[0]?.excerpt?.length).toBe(300)
    expect(g?.entries[0]?.excerpt?.startsWith("page one xx")).toBe(true)
    expect(g?.entries[1]?.excerpt).toBe("text 2")
    expect(g?.entries[2]?.excerpt).toBeNull()
    expect(g?.entries[0]).toMatchObject({ kind: "attachment", date: "2026-03-12T09:15:00Z", link: null, origin: "deterministic", proposed: false })
    expect(b.line).toBe(
      "Unconfirmed rule from 2026-03-12: Ask the supplier for the delivery time before ordering black hook rails — with 1 mail, 7 mails in thread, 7 attachments (2 unread); proposed 0 days ago, not confirmed"
    )
  })

  it("a jamie transcript longer than 300 characters is cut with …; the head quote stays full", async () => {
    const segments = Array.from({ length: 40 }, (_, i) => ({ start_s: i * 10, speaker: "Tom", text: `segment number ${i} of the long meeting` }))
    segments[5] = { start_s: 50, speaker: "Maria", text: "we always ask the supplier for the delivery time before ordering black hook rails" }
    await write(Effect.all([
      storeSource(jamieSource({ segments }, "jamie:long"), "service:1"),
      propose(jamieProposal({ source: { ...jamieProposal().source, id: "jamie:long", timestamp_s: 50 } as ProposalRequest["source"] }), agent)
    ], { concurrency: 1 }))
    const b = await bundleOf("sales-0002")
    const excerpt = b.groups[0]?.entries[0]?.excerpt ?? ""
    expect([...excerpt].length).toBe(300)
    expect(excerpt.startsWith("segment number 0 of the long meeting segment number 1")).toBe(true)
    expect(excerpt.endsWith("…")).toBe(true)
    expect(b.head.excerpt).toBe("we always ask the supplier for the delivery time before ordering black hook rails")
    expect(b.head.source.timestamp).toBe("0:50")
  })
})

describe("same-relation", () => {
  const rel = (name: string, kind: Relation["kind"] = "product"): Array<Relation> => [{ kind, name, ref: null }]
  const other = (i: number, over: Partial<ProposalRequest> = {}) =>
    manualProposal(`Related rule number ${i} about hook rails`, {
      relations: rel(i % 2 === 0 ? "HAKENLEISTE SCHWARZ" : "hakenleiste schwarz"),
      said_at: `2026-03-0${i}T08:00:00Z`, valid_from: "2026-03-01", ...over
    })

  beforeEach(async () => {
    await write(Effect.all([storeSource(mailSource(), "service:1"), propose(mailProposal(), agent)]))
    await confirm("sales-0001")
    // sales-0002 … sales-0007: confirmed, same relation in another case, said_at 03-01 … 03-06
    for (let i = 1; i <= 6; i++) {
      await write(propose(other(i), agent))
      await confirm(`sales-000${i + 1}`)
    }
    await write(Effect.all([
      propose(other(7), agent), // sales-0008: proposal
      propose(other(8, { relations: rel("Hakenleiste schwarz", "customer") }), agent), // sales-0009: other kind
      propose(other(9, { relations: rel("Hakenleiste weiss") }), agent), // sales-0010: other name
      propose(other(8, { valid_from: "2026-05-01" }), agent), // sales-0011: not yet in force
      propose(other(9), agent) // sales-0012: rejected below
    ], { concurrency: 1 }))
    for (const id of ["sales-0009", "sales-0010", "sales-0011"]) await confirm(id)
    await at(T0, decide("sales-0012", { decision: "reject", version: 1, reason: "duplicate" }, person))
  })

  it("other rules with an equal relation (kind, case-insensitive name) in force on the target day, newest 5 with more", async () => {
    const b = await bundleOf("sales-0001")
    const g = b.groups.find((x) => x.kind === "same-relation")
    expect(g).toMatchObject({ count: 6, more: 1 })
    expect(g?.entries.map((e) => e.ref)).toEqual(["rule/sales-0007@2", "rule/sales-0006@2", "rule/sales-0005@2", "rule/sales-0004@2", "rule/sales-0003@2"])
    expect(g?.entries[0]).toEqual({
      ref: "rule/sales-0007@2", kind: "rule", date: "2026-03-06T08:00:00Z", title: "Related rule number 6 about hook rails",
      excerpt: "said in the hallway", link: null, origin: "deterministic", proposed: false
    })
    expect(b.line).toBe(
      "Rule from 2026-03-12: Ask the supplier for the delivery time before ordering black hook rails — with 1 mail, 2 attachments (1 unread), 6 related rules; last reviewed 0 days ago"
    )
  })

  it("proposals only when the search included them; a rule not yet in force only from its valid_from on", async () => {
    const withProposals = (await bundleOf("sales-0001", { includeProposals: true })).groups.find((x) => x.kind === "same-relation")
    expect(withProposals?.count).toBe(7)
    expect(withProposals?.entries[0]?.ref).toBe("rule/sales-0008@1")
    const later = (await bundleOf("sales-0001", { targetDay: "2026-05-01" })).groups.find((x) => x.kind === "same-relation")
    expect(later?.count).toBe(7)
    expect(later?.entries.map((e) => e.ref)).toContain("rule/sales-0011@2")
    const before = (await bundleOf("sales-0001", { targetDay: "2026-02-28" })).groups.find((x) => x.kind === "same-relation")
    expect(before).toBeUndefined()
  })

  it("compares names case-insensitively beyond ASCII", async () => {
    await write(Effect.all([
      propose(manualProposal("Payment terms for Müller are 30 days net", { relations: rel("Müller GmbH", "customer") }), agent),
      propose(manualProposal("Müller always gets the invoice by post", { relations: rel("MÜLLER GMBH", "customer") }), agent)
    ], { concurrency: 1 }))
    const g = (await bundleOf("sales-0013", { includeProposals: true })).groups.find((x) => x.kind === "same-relation")
    expect(g?.entries.map((e) => e.ref)).toEqual(["rule/sales-0014@1"])
  })

  it("gives the same group from rule_version on a file whose lexical tables were never built", async () => {
    const built = (await bundleOf("sales-0001", { includeProposals: true })).groups.find((x) => x.kind === "same-relation")
    await run(config, Effect.flatMap(sqlOf("sales"), (sql) => sql`DELETE FROM lex_meta WHERE key = 'build'`.raw))
    const fallback = (await bundleOf("sales-0001", { includeProposals: true })).groups.find((x) => x.kind === "same-relation")
    expect(fallback).toEqual(built)
    expect(built?.count).toBeGreaterThan(0)
  })
})

describe("readBundle", () => {
  beforeEach(async () => {
    await write(Effect.all([storeSource(mailSource(), "service:1"), propose(mailProposal(), agent)]))
  })
  const read = (ruleId: string, asOf: string | null, includeProposals: boolean) =>
    run(config, Effect.flatMap(sqlOf("sales"), (sql) =>
      readBundle(sql, ruleId, { zone: ZONE, recheckAfterDays: 180, nowMs: T0, asOf, includeProposals })))

  it("a proposal only with include_proposals; the head of a read has no rank, found_via, coverage", async () => {
    expect(await read("sales-0001", null, false)).toBeUndefined()
    const b = await read("sales-0001", null, true)
    expect(b?.head).toMatchObject({
      ref: "rule/sales-0001@1", unconfirmed: true, rank: { a: null, b: null, rrf: null, reranker: null },
      found_via: [], coverage: null, matched_terms: null, entities: []
    })
    expect(await read("sales-0099", null, true)).toBeUndefined()
  })

  it("rejected never; as_of picks the newest version in force, ending where the rule ended", async () => {
    await confirm("sales-0001")
    await write(propose(manualProposal("From April on the delivery time is asked by phone", { supersedes: "sales-0001", valid_from: "2026-04-01" }), agent))
    await confirm("sales-0002")
    expect((await read("sales-0001", null, false))?.head.ref).toBe("rule/sales-0001@3")
    expect((await read("sales-0001", "2026-03-20", false))?.head.ref).toBe("rule/sales-0001@3")
    expect(await read("sales-0001", "2026-04-01", false)).toBeUndefined()
    expect(await read("sales-0001", "2026-03-01", false)).toBeUndefined()
    await write(propose(manualProposal("A rule that will be rejected soon"), agent))
    await at(T0, decide("sales-0003", { decision: "reject", version: 1, reason: "no" }, person))
    expect(await read("sales-0003", null, true)).toBeUndefined()
    expect(await read("sales-0003", "2026-03-20", true)).toBeUndefined()
  })

  it("chooseReadVersion: a review with new keywords leaves older confirmed versions behind", () => {
    const v = (version: number, status: RuleVersionRow["status"], validUntil: string | null = null): RuleVersionRow => ({
      rule_id: "sales-0001", version, kind: "rule", statement: "s".repeat(10), source_id: "manual:x", quote: "q", timestamp_s: null,
      source_link: null, said_at: "2026-03-01T00:00:00Z", speaker: null, relations: "[]", keywords: "[]", valid_from: "2026-03-01",
      valid_until: validUntil, supersedes: null, superseded_by: null, status, reason: "r", changed_by: "person:2", changed_at: "2026-03-01T00:00:00Z"
    })
    const versions = [v(1, "proposed"), v(2, "confirmed"), v(3, "confirmed")]
    expect(chooseReadVersion(versions, null, false)?.version).toBe(3)
    expect(chooseReadVersion(versions, "2026-03-05", false)?.version).toBe(3)
    expect(chooseReadVersion([v(1, "proposed")], "2026-03-05", true)?.version).toBe(1)
    expect(chooseReadVersion([v(1, "proposed")], "2026-03-05", false)).toBeUndefined()
    expect(chooseReadVersion([...versions, v(4, "superseded", "2026-04-01")], "2026-04-02", false)).toBeUndefined()
  })
})

describe("graph (graph.md §11): head.entities, entity and contradicts groups, same-relation via entities", () => {
  const MCP = { grantId: "person:1", channel: "mcp" as const }
  const LINE_HEAD = "Rule from 2026-03-12: Ask the supplier for the delivery time before ordering black hook rails — with 1 mail, 2 attachments (1 unread)"

  /** createEntity (the real writer) at the clock's current instant; the new id. */
  const entity = (name: string, type: string, parent: string | null) =>
    Effect.map(createEntity({ scope: "sales", type, name, parent_id: parent }, MCP), (a) => a.id)

  /** proposeLink (the real writer) at `ms`; the new link id. */
  const link = (from: string, to: string, type: "concerns" | "mentions" | "contradicts", confidence: number, ms = T0) =>
    Effect.gen(function*() {
      yield* TestClock.setTime(ms)
      const r = yield* proposeLink({ scope: "sales", from_ref: from, to_ref: to, type, confidence, reason: "the mail names it" }, { grantId: "person:1" })
      return r.link.id ?? ""
    })

  const reviewLink = (id: string, verdict: "confirm" | "reject") =>
    applyReview({ target: `link/${id}`, verdict, ...(verdict === "reject" ? { reason: "not about this" } : {}) }, person)

  const rule = (n: number) => `rule/sales-${String(n).padStart(4, "0")}`
  /** the rule id of a proposal's ref rule/<id>@1 */
  const idOf = (created: { readonly ref: string }) => created.ref.replace(/^rule\//, "").replace(/@\d+$/, "")

  /** A confirmed manual rule without relations (unless given); its id. */
  const confirmedRule = (statement: string, over: Partial<ProposalRequest> = {}) =>
    Effect.gen(function*() {
      const id = idOf(yield* propose(manualProposal(statement, { relations: [], said_at: "2026-03-10T08:00:00Z", ...over }), agent))
      yield* decide(id, { decision: "confirm", version: 1 }, person)
      return id
    })

  let tree: { vertrieb: string; nord: string; meier: string; schulz: string; alpha: string }

  beforeEach(async () => {
    tree = await write(Effect.gen(function*() {
      yield* storeSource(mailSource(), "service:1")
      yield* propose(mailProposal(), agent)
      yield* decide("sales-0001", { decision: "confirm", version: 1 }, person)
      const vertrieb = yield* entity("Vertrieb", "department", null)
      const nord = yield* entity("Nord", "department", vertrieb)
      const meier = yield* entity("Kunde Meier", "customer", nord)
      const schulz = yield* entity("Kunde Schulz", "customer", nord)
      const alpha = yield* entity("Projekt Alpha", "project", null)
      return { vertrieb, nord, meier, schulz, alpha }
    }))
  })

  it("G5: a proposed link counts after a confirm review or at/above proposed_min_confidence, never after a reject; marked proposed in the bundle and the line", async () => {
    const l1 = await write(link(rule(1), `entity/${tree.meier}`, "concerns", 0.7))
    const l2 = await write(link(rule(1), `entity/${tree.alpha}`, "mentions", 0.95))
    const plain = await bundleOf("sales-0001")
    expect(plain.head.entities).toEqual([])
    expect(plain.groups.map((g) => g.kind)).toEqual(["source", "attachment"])
    expect(plain.line).toBe(`${LINE_HEAD}; last reviewed 0 days ago`)

    // at the configured confidence it counts, still marked proposed
    const reached = await bundleOf("sales-0001", { minConfidence: 0.7 })
    expect(reached.head.entities).toEqual([
      {
        ref: `entity/${tree.alpha}`, name: "Projekt Alpha", type: "project",
        path: [{ ref: `entity/${tree.alpha}`, name: "Projekt Alpha", type: "project" }], proposed: true
      },
      {
        ref: `entity/${tree.meier}`, name: "Kunde Meier", type: "customer",
        path: [
          { ref: `entity/${tree.vertrieb}`, name: "Vertrieb", type: "department" },
          { ref: `entity/${tree.nord}`, name: "Nord", type: "department" },
          { ref: `entity/${tree.meier}`, name: "Kunde Meier", type: "customer" }
        ],
        proposed: true
      }
    ])
    expect(reached.groups.map((g) => g.kind)).toEqual(["source", "attachment", "entity"])
    expect(reached.groups[2]).toEqual({
      kind: "entity", count: 2, more: 0,
      entries: [
        { ref: `entity/${tree.alpha}`, kind: "entity", date: new Date(T0).toISOString(), title: "Projekt Alpha", excerpt: null, link: null, origin: "proposed", proposed: true },
        { ref: `entity/${tree.meier}`, kind: "entity", date: new Date(T0).toISOString(), title: "Vertrieb › Nord › Kunde Meier", excerpt: null, link: null, origin: "proposed", proposed: true }
      ]
    })
    expect(reached.line).toBe(`${LINE_HEAD}, 2 entities (of which 2 proposed); last reviewed 0 days ago`)
    // just below it does not count
    expect((await bundleOf("sales-0001", { minConfidence: 0.71 })).head.entities.map((e) => e.ref)).toEqual([`entity/${tree.alpha}`])
    // the running config's minimum applies when the caller names none
    const configured = testConfig(dir, { graph: { proposed_min_confidence: 0.9 } })
    const viaConfig = await run(configured, Effect.flatMap(sqlOf("sales"), (sql) =>
      readBundle(sql, "sales-0001", { zone: ZONE, recheckAfterDays: 180, nowMs: T0, asOf: null, includeProposals: false })))
    expect(viaConfig?.head.entities.map((e) => e.ref)).toEqual([`entity/${tree.alpha}`])

    // a confirm review: counted without a minimum, no longer marked proposed (origin stays proposed)
    await write(reviewLink(l1, "confirm"))
    // a reject: never counted, whatever the minimum
    await write(reviewLink(l2, "reject"))
    for (const minConfidence of [null, 0]) {
      const b = await bundleOf("sales-0001", { minConfidence })
      expect(b.head.entities.map((e) => [e.ref, e.proposed])).toEqual([[`entity/${tree.meier}`, false]])
      expect(b.groups.find((g) => g.kind === "entity")?.entries).toMatchObject([{ ref: `entity/${tree.meier}`, origin: "proposed", proposed: false }])
      expect(b.line).toBe(`${LINE_HEAD}, 1 entity; last reviewed 0 days ago`)
    }
    // GET /v1/rules/:id answers the same bundle builder
    const read = await run(config, Effect.flatMap(sqlOf("sales"), (sql) =>
      readBundle(sql, "sales-0001", { zone: ZONE, recheckAfterDays: 180, nowMs: T0, asOf: null, includeProposals: false })))
    expect(read?.head.entities.map((e) => e.ref)).toEqual([`entity/${tree.meier}`])
    expect(read?.line).toBe(`${LINE_HEAD}, 1 entity; last reviewed 0 days ago`)
  })

  it("only links open on the target day count; archived entities are left out", async () => {
    const later = T0 + 2 * DAY_MS
    const l = await write(link(rule(1), `entity/${tree.schulz}`, "concerns", 0.9, later))
    await write(reviewLink(l, "confirm"))
    expect((await bundleOf("sales-0001")).head.entities).toEqual([])
    expect((await bundleOf("sales-0001", { targetDay: "2026-03-22" })).head.entities.map((e) => e.ref)).toEqual([`entity/${tree.schulz}`])
    await at(later, archiveEntity(tree.schulz, { version: 1, reason: "customer left" }, person))
    const b = await bundleOf("sales-0001", { targetDay: "2026-03-22" })
    expect(b.head.entities).toEqual([])
    expect(b.groups.find((g) => g.kind === "entity")).toBeUndefined()
  })

  it("head.entities: not proposed first, then confidence, then date; at most 10; the entity group counts all and shows the first 5", async () => {
    const names = ["Alfa", "Bravo", "Charlie", "Delta", "Echo", "Foxtrot", "Golf", "Hotel", "India", "Juliett", "Kilo", "Lima", "Mike"]
    const ids = await write(Effect.forEach(names, (n) => entity(`Projekt ${n}`, "project", null)))
    const to = (i: number) => `entity/${ids[i] ?? ""}`
    const day = (k: number) => T0 - k * DAY_MS
    // 0 Alfa: a person's link (human, confidence 1)
    await run(config, insertLinkRow("sales", { from_ref: rule(1), to_ref: to(0), type: "concerns", origin: "human", valid_from: new Date(day(5)).toISOString() }))
    const confirmed = await write(Effect.all([
      link(rule(1), to(1), "concerns", 0.9, day(4)), // 1 Bravo
      link(rule(1), to(2), "concerns", 0.6, day(1)), // 2 Charlie: newer than Delta
      link(rule(1), to(3), "mentions", 0.6, day(3)) // 3 Delta
    ], { concurrency: 1 }))
    await write(Effect.forEach(confirmed, (l) => reviewLink(l, "confirm")))
    // proposed, not reviewed: counted with minConfidence 0.5
    await write(Effect.all([
      link(rule(1), to(4), "concerns", 0.95, day(2)), // 4 Echo
      link(rule(1), to(5), "concerns", 0.8, day(3)), // 5 Foxtrot: older than Golf
      link(rule(1), to(6), "concerns", 0.8, day(1)), // 6 Golf
      link(rule(1), to(7), "concerns", 0.7, day(1)), // 7 Hotel
      link(rule(1), to(8), "concerns", 0.65, day(1)), // 8 India
      link(rule(1), to(9), "concerns", 0.6, day(1)), // 9 Juliett
      link(rule(1), to(10), "concerns", 0.55, day(1)), // 10 Kilo
      link(rule(1), to(11), "concerns", 0.5, day(1)), // 11 Lima
      link(rule(1), to(12), "concerns", 0.4, day(1)) // 12 Mike: below the minimum
    ], { concurrency: 1 }))
    const b = await bundleOf("sales-0001", { minConfidence: 0.5 })
    const order = ["Alfa", "Bravo", "Charlie", "Delta", "Echo", "Golf", "Foxtrot", "Hotel", "India", "Juliett", "Kilo", "Lima"]
    expect(b.head.entities.map((e) => e.name)).toEqual(order.slice(0, 10).map((n) => `Projekt ${n}`))
    expect(b.head.entities.map((e) => e.proposed)).toEqual([false, false, false, false, true, true, true, true, true, true])
    const g = b.groups.find((x) => x.kind === "entity")
    expect([g?.count, g?.more]).toEqual([12, 7])
    expect(g?.entries.map((e) => e.title)).toEqual(order.slice(0, 5).map((n) => `Projekt ${n}`))
    expect(g?.entries.map((e) => [e.origin, e.proposed, e.date])).toEqual([
      ["human", false, new Date(day(5)).toISOString()],
      ["proposed", false, new Date(day(4)).toISOString()],
      ["proposed", false, new Date(day(1)).toISOString()],
      ["proposed", false, new Date(day(3)).toISOString()],
      ["proposed", true, new Date(day(2)).toISOString()]
    ])
    expect(b.line).toBe(`${LINE_HEAD}, 12 entities (of which 1 proposed); last reviewed 0 days ago`)
  })

  it("contradicts: rules linked by contradicts in either direction, passing the head filter", async () => {
    const ids = await write(Effect.gen(function*() {
      const from = yield* confirmedRule("Never ask the supplier, order at once") // sales-0002 → sales-0001
      const to = yield* confirmedRule("Order black hook rails only by phone", { said_at: "2026-03-11T08:00:00Z" }) // sales-0001 → sales-0003
      const open = idOf(yield* propose(manualProposal("Maybe skip the delivery time for small orders", { relations: [] }), agent)) // sales-0004, a proposal
      const future = yield* confirmedRule("From May on hook rails need no question", { valid_from: "2026-05-01" }) // sales-0005
      const rejected = idOf(yield* propose(manualProposal("Delivery times are irrelevant", { relations: [] }), agent)) // sales-0006
      return { from, to, open, future, rejected }
    }))
    // sales-0002 → sales-0001 by a person (no writer for human links yet: the fixture row)
    await run(config, insertLinkRow("sales", { from_ref: rule(2), to_ref: rule(1), type: "contradicts", origin: "human", valid_from: new Date(T0).toISOString() }))
    const proposedLinks = await write(Effect.all([
      link(rule(1), rule(3), "contradicts", 0.9),
      link(rule(4), rule(1), "contradicts", 0.9),
      link(rule(5), rule(1), "contradicts", 0.9),
      link(rule(6), rule(1), "contradicts", 0.9)
    ], { concurrency: 1 }))
    await write(Effect.forEach(proposedLinks, (l) => reviewLink(l, "confirm")))
    await at(T0, decide(ids.rejected, { decision: "reject", version: 1, reason: "wrong" }, person))

    const b = await bundleOf("sales-0001")
    const g = b.groups.find((x) => x.kind === "contradicts")
    expect(g).toEqual({
      kind: "contradicts", count: 2, more: 0,
      entries: [
        {
          ref: "rule/sales-0003@2", kind: "rule", date: "2026-03-11T08:00:00Z", title: "Order black hook rails only by phone",
          excerpt: "said in the hallway", link: null, origin: "proposed", proposed: false
        },
        {
          ref: "rule/sales-0002@2", kind: "rule", date: "2026-03-10T08:00:00Z", title: "Never ask the supplier, order at once",
          excerpt: "said in the hallway", link: null, origin: "human", proposed: false
        }
      ]
    })
    expect(b.line).toBe(`${LINE_HEAD}, 2 contradicting rules; last reviewed 0 days ago`)
    // proposals only when the search includes them; a rule not yet in force only from its valid_from
    expect((await bundleOf("sales-0001", { includeProposals: true })).groups.find((x) => x.kind === "contradicts")?.count).toBe(3)
    expect((await bundleOf("sales-0001", { targetDay: "2026-05-01" })).groups.find((x) => x.kind === "contradicts")?.entries.map((e) => e.ref))
      .toContain("rule/sales-0005@2")
    // the other end sees the head too
    expect((await bundleOf("sales-0003")).groups.find((x) => x.kind === "contradicts")?.entries.map((e) => e.ref)).toEqual(["rule/sales-0001@2"])
    expect((await bundleOf("sales-0002")).groups.find((x) => x.kind === "contradicts")?.entries.map((e) => e.ref)).toEqual(["rule/sales-0001@2"])
  })

  it("a superseded head with contradicting rules: the line names the successor, then the contradicting rules", async () => {
    await write(Effect.gen(function*() {
      yield* propose(manualProposal("From April on the delivery time is asked by phone", {
        supersedes: "sales-0001", valid_from: "2026-04-01", said_at: "2026-03-19T08:00:00Z", relations: []
      }), agent)
      yield* decide("sales-0002", { decision: "confirm", version: 1 }, person)
      yield* confirmedRule("Never ask the supplier, order at once") // sales-0003
    }))
    await write(link(rule(3), rule(1), "contradicts", 0.8))
    const b = await bundleOf("sales-0001", { minConfidence: 0.8 })
    expect(b.groups.map((g) => g.kind)).toEqual(["source", "attachment", "successor", "contradicts"])
    expect(b.groups[3]?.entries).toMatchObject([{ ref: "rule/sales-0003@2", origin: "proposed", proposed: true }])
    expect(b.line).toBe(
      "Superseded rule from 2026-03-12: Ask the supplier for the delivery time before ordering black hook rails — with 1 mail, 2 attachments (1 unread), superseded by sales-0002, 1 contradicting rule (of which 1 proposed); last reviewed 0 days ago"
    )
  })

  it("same-relation holds the rules linked to the same entity or one of its ancestors, not siblings or other trees", async () => {
    await write(Effect.gen(function*() {
      yield* confirmedRule("Nord orders go through the regional office", { said_at: "2026-03-02T08:00:00Z" }) // sales-0002 → Nord
      yield* confirmedRule("Vertrieb books every order in the ERP", { said_at: "2026-03-03T08:00:00Z" }) // sales-0003 → Vertrieb
      yield* confirmedRule("Meier pays within 10 days", { said_at: "2026-03-04T08:00:00Z" }) // sales-0004 → Kunde Meier
      yield* confirmedRule("Schulz gets a discount", { said_at: "2026-03-05T08:00:00Z" }) // sales-0005 → Kunde Schulz (sibling)
      yield* confirmedRule("Alpha needs weekly reports", { said_at: "2026-03-06T08:00:00Z" }) // sales-0006 → Projekt Alpha
      // sales-0007: shares the head's relation and is linked to Nord
      yield* confirmedRule("Black hook rails for Nord come from stock", {
        said_at: "2026-03-07T08:00:00Z", relations: [{ kind: "product", name: "hakenleiste SCHWARZ", ref: null }]
      })
    }))
    const head = await write(link(rule(1), `entity/${tree.meier}`, "concerns", 0.9))
    await write(reviewLink(head, "confirm"))
    await run(config, insertLinkRow("sales", { from_ref: rule(2), to_ref: `entity/${tree.nord}`, type: "concerns", origin: "human", valid_from: new Date(T0).toISOString() }))
    await write(Effect.all([
      link(rule(3), `entity/${tree.vertrieb}`, "mentions", 0.9),
      link(rule(4), `entity/${tree.meier}`, "concerns", 0.9),
      link(rule(5), `entity/${tree.schulz}`, "concerns", 0.9),
      link(rule(6), `entity/${tree.alpha}`, "concerns", 0.9),
      link(rule(7), `entity/${tree.nord}`, "concerns", 0.9)
    ], { concurrency: 1 }))
    // without a minimum only the person's link to Nord and the relation count
    const strict = (await bundleOf("sales-0001")).groups.find((g) => g.kind === "same-relation")
    expect(strict?.entries.map((e) => [e.ref, e.origin, e.proposed])).toEqual([
      ["rule/sales-0007@2", "deterministic", false],
      ["rule/sales-0002@2", "human", false]
    ])
    const b = await bundleOf("sales-0001", { minConfidence: 0.9 })
    const g = b.groups.find((x) => x.kind === "same-relation")
    expect(g?.count).toBe(4)
    expect(g?.entries.map((e) => [e.ref, e.origin, e.proposed])).toEqual([
      ["rule/sales-0007@2", "deterministic", false],
      ["rule/sales-0004@2", "proposed", true],
      ["rule/sales-0003@2", "proposed", true],
      ["rule/sales-0002@2", "human", false]
    ])
    expect(b.line).toBe(`${LINE_HEAD}, 1 entity, 4 related rules (of which 2 proposed); last reviewed 0 days ago`)
    // a rule linked only to the ancestor sees no rule below it (only its own entity and its ancestors)
    const up = (await bundleOf("sales-0003", { minConfidence: 0.9 })).groups.find((x) => x.kind === "same-relation")
    expect(up).toBeUndefined()
  })
})
