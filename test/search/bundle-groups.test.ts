/**
 * Bundles of many heads at once (bundle-groups.ts) on a real SQLite file: buildBundles over the
 * heads of a seeded scope equals buildBundle of each head alone — same bundles, same order —
 * for heads sharing relations with each other and heads with none, supersession chains,
 * proposals, entity and contradicts links, mail threads with attachments, transcripts and manual
 * sources. Fixtures are written with the real writers on a TestClock fixed at T0.
 */
import { Effect, TestClock, TestContext } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { ScopeStore } from "../../src/db/scope-store.js"
import { decide } from "../../src/decision/decide.js"
import type { ProposalRequest } from "../../src/domain/proposal-schemas.js"
import { propose } from "../../src/domain/proposals.js"
import type { RuleVersionRow } from "../../src/domain/rules.js"
import type { Relation } from "../../src/contracts/schemas.js"
import type { Bundle } from "../../src/domain/search-schemas.js"
import type { SourceRequest } from "../../src/domain/source-schemas.js"
import { storeSource } from "../../src/domain/sources.js"
import { createEntity } from "../../src/graph/entities.js"
import { proposeLink } from "../../src/graph/links.js"
import { type BundleOptions, buildBundle, buildBundles, type HeadInput } from "../../src/search/bundle.js"
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
const MCP = { grantId: "person:1", channel: "mcp" as const }
const T0 = Date.parse("2026-03-20T10:00:00Z")
const ROOT = "mail:<root@example.com>"

const write = <A, E>(effect: Effect.Effect<A, E, Stores>) =>
  run(config, Effect.gen(function*() {
    yield* TestClock.setTime(T0)
    return yield* effect
  }).pipe(Effect.provide(TestContext.TestContext)))

const rel = (name: string, kind: Relation["kind"] = "product"): Array<Relation> => [{ kind, name, ref: null }]
const idOf = (created: { readonly ref: string }) => created.ref.replace(/^rule\//, "").replace(/@\d+$/, "")
const rule = (id: string | undefined) => `rule/${id ?? "missing"}`

const mail = (id: string, thread: string | null, occurredAt: string, text: string, attachments: number, unread: ReadonlyArray<number> = []) =>
  mailSource({
    source: { kind: "mail", id, title: `Re: ${id}`, occurred_at: occurredAt, sender: "tom@example.com", thread, link: `https://mail.example.com/${encodeURIComponent(id)}` },
    text,
    attachments: Array.from({ length: attachments }, (_, i): SourceRequest["attachments"][number] => ({
      filename: `${id}-${i + 1}.pdf`, media_type: "application/pdf", size: 10, external: null,
      text: unread.includes(i + 1) ? null : `text ${i + 1} of ${id}`, text_origin: unread.includes(i + 1) ? null : "ocr"
    }))
  }, id)

const fromMail = (id: string, over: Partial<ProposalRequest>) =>
  mailProposal({ source: { ...mailProposal().source, id } as ProposalRequest["source"], ...over })

const fromMeeting = (over: Partial<ProposalRequest>): ProposalRequest => ({
  ...mailProposal(),
  source: {
    kind: "jamie", id: "jamie:meeting-2026-03-12",
    quote: "we always ask the supplier for the delivery time before ordering black hook rails",
    timestamp_s: 100, link: "https://jamie.example.com/m/7?t=100"
  },
  said_at: "2026-03-12T10:00:00Z",
  ...over
})

/** Ids of the seeded rules by role. */
let ids: Record<string, string>

/**
 * The scope: a mail thread (root, two head mails with attachments, five replies), a mail of its
 * own, a meeting, manual rules; seven rules sharing one relation (in two spellings), three
 * sharing another, one with a relation nobody shares, rules without relations; a supersession
 * chain; a proposal, a rule not yet in force, a rejected one; an entity tree with confirmed,
 * proposed, human and rejected links, and contradicts links between heads.
 */
beforeEach(async () => {
  ;({ dir, cleanup } = tempDir())
  config = testConfig(dir)
  await run(config, Effect.flatMap(ScopeStore, (store) => store.create("sales")))
  ids = await write(Effect.gen(function*() {
    yield* storeSource(mail(ROOT, null, "2026-03-01T08:00:00Z", "the root of the thread", 0), "service:1")
    yield* storeSource(mail("mail:<a@example.com>", ROOT, "2026-03-12T09:15:00Z", MAIL_TEXT, 3, [2]), "service:1")
    yield* storeSource(mail("mail:<b@example.com>", ROOT, "2026-03-11T09:15:00Z", MAIL_TEXT, 7, [1, 6]), "service:1")
    for (let i = 1; i <= 5; i++) yield* storeSource(mail(`mail:<reply-${i}@example.com>`, ROOT, `2026-03-1${i}T07:00:00Z`, `reply ${i}`, 0), "service:1")
    yield* storeSource(mail("mail:<alone@example.com>", null, "2026-03-09T09:15:00Z", MAIL_TEXT, 1, [1]), "service:1")
    yield* storeSource(jamieSource(), "service:1")

    const proposeId = (p: ProposalRequest) => Effect.map(propose(p, agent), idOf)
    const confirmed = (p: ProposalRequest) =>
      Effect.gen(function*() {
        const id = yield* proposeId(p)
        yield* decide(id, { decision: "confirm", version: 1 }, person)
        return id
      })
    const out: Record<string, string> = {}
    out.a = yield* confirmed(fromMail("mail:<a@example.com>", { relations: rel("Hakenleiste schwarz"), said_at: "2026-03-12T09:15:00Z" }))
    out.b = yield* confirmed(fromMail("mail:<b@example.com>", {
      statement: "Black hook rails for Meier come from stock",
      relations: [...rel("hakenleiste SCHWARZ"), ...rel("Meier", "customer")], said_at: "2026-03-11T09:15:00Z"
    }))
    out.meeting = yield* confirmed(fromMeeting({ relations: rel("meier", "customer") }))
    out.old = yield* confirmed(manualProposal("Orders are booked on Fridays", { relations: [], said_at: "2026-03-01T08:00:00Z" }))
    out.successor = yield* confirmed(manualProposal("Orders are booked on Mondays", {
      supersedes: out.old, valid_from: "2026-03-15", said_at: "2026-03-14T08:00:00Z", relations: []
    }))
    out.proposal = yield* proposeId(fromMail("mail:<alone@example.com>", { relations: rel("hakenleiste schwarz"), said_at: "2026-03-13T08:00:00Z" }))
    for (let i = 1; i <= 5; i++) {
      out[`same${i}`] = yield* confirmed(manualProposal(`Related rule ${i} about hook rails`, {
        relations: rel(i % 2 === 0 ? "HAKENLEISTE SCHWARZ" : "hakenleiste schwarz"), said_at: `2026-03-0${i}T08:00:00Z`, valid_from: "2026-03-01"
      }))
    }
    out.later = yield* confirmed(manualProposal("Meier gets a new price list in May", {
      relations: rel("MEIER", "customer"), said_at: "2026-03-16T08:00:00Z", valid_from: "2026-05-01"
    }))
    out.rejected = yield* proposeId(manualProposal("Hook rails are never ordered", { relations: rel("hakenleiste schwarz") }))
    yield* decide(out.rejected ?? "", { decision: "reject", version: 1, reason: "duplicate" }, person)
    out.alone = yield* confirmed(manualProposal("Würth delivers on Tuesdays", { relations: rel("Würth", "supplier"), said_at: "2026-03-08T08:00:00Z" }))
    out.plain = yield* confirmed(manualProposal("Invoices go out on the first of the month", { relations: [], said_at: "2026-03-07T08:00:00Z" }))

    const entity = (name: string, type: string, parent: string | null) =>
      Effect.map(createEntity({ scope: "sales", type, name, parent_id: parent }, MCP), (e) => e.id)
    const vertrieb = yield* entity("Vertrieb", "department", null)
    const nord = yield* entity("Nord", "department", vertrieb)
    const meier = yield* entity("Kunde Meier", "customer", nord)
    const alpha = yield* entity("Projekt Alpha", "project", null)
    const link = (from: string, to: string, type: "concerns" | "mentions" | "contradicts", confidence: number) =>
      Effect.map(proposeLink({ scope: "sales", from_ref: from, to_ref: to, type, confidence, reason: "the mail names it" }, { grantId: "person:1" }),
        (r) => r.link.id ?? "")
    const review = (id: string, verdict: "confirm" | "reject") =>
      applyReview({ target: `link/${id}`, verdict, ...(verdict === "reject" ? { reason: "not about this" } : {}) }, person)
    yield* review(yield* link(rule(out.a), `entity/${meier}`, "concerns", 0.9), "confirm")
    yield* link(rule(out.old), `entity/${alpha}`, "mentions", 0.85)
    yield* link(rule(out.same2), `entity/${vertrieb}`, "mentions", 0.9)
    yield* link(rule(out.plain), `entity/${nord}`, "concerns", 0.95)
    yield* review(yield* link(rule(out.alone), `entity/${meier}`, "concerns", 0.95), "reject")
    yield* link(rule(out.b), rule(out.meeting), "contradicts", 0.8)
    yield* review(yield* link(rule(out.plain), rule(out.same1), "contradicts", 0.99), "confirm")
    return { ...out, nord, alpha }
  }))
  await run(config, insertLinkRow("sales", { from_ref: rule(ids.meeting), to_ref: `entity/${ids.nord}`, type: "concerns", origin: "human", valid_from: new Date(T0).toISOString() }))
  await run(config, insertLinkRow("sales", { from_ref: rule(ids.successor), to_ref: rule(ids.a), type: "contradicts", origin: "human", valid_from: new Date(T0).toISOString() }))
})
afterEach(() => cleanup())

const OPTIONS: BundleOptions = { zone: "Europe/Berlin", recheckAfterDays: 180, nowMs: T0, targetDay: "2026-03-20", includeProposals: false, minConfidence: null }

/** The heads: every rule's current version but the rejected one, in an order unlike the rules', one head twice. */
const headsOf = (rows: ReadonlyArray<RuleVersionRow>): Array<HeadInput> => {
  const versions = rows.filter((v) => v.status !== "rejected")
  const order = [...versions.slice(1).reverse(), ...versions.slice(0, 1), ...versions.slice(3, 4)]
  return order.map((version, i) => ({
    version, scope: "sales", rank: { a: i + 0.5, b: null, rrf: null, reranker: null }, found_via: [`term${i}`], coverage: 0.5, matched_terms: i
  }))
}

/** buildBundles over the heads and buildBundle of each alone, in one read transaction. */
const both = (opts: BundleOptions) =>
  run(config, Effect.gen(function*() {
    const sql = yield* sqlOf("sales")
    return yield* sql.withTransaction(Effect.gen(function*() {
      const heads = headsOf(yield* sql<RuleVersionRow>`SELECT * FROM current_version ORDER BY rule_id`)
      const batch = yield* buildBundles(sql, heads, opts)
      const alone = yield* Effect.forEach(heads, (h) => buildBundle(sql, h, opts))
      return { heads, batch, alone }
    }))
  }))

const groupOf = (b: Bundle | undefined, kind: string) => b?.groups.find((g) => g.kind === kind)

describe("buildBundles", () => {
  it("equals buildBundle of each head alone, in the heads' order, for many heads of varied bundles", async () => {
    const { heads, batch, alone } = await both(OPTIONS)
    expect(heads.length).toBe(15)
    expect(batch).toEqual(alone)
    expect(batch.map((b) => b.head.ref)).toEqual(heads.map((h) => `rule/${h.version.rule_id}@${h.version.version}`))
    expect(batch.map((b) => b.head.rank.a)).toEqual(heads.map((h) => h.rank.a))

    // the heads' bundles are varied: every kind of group occurs, and groups differ between heads
    expect(new Set(batch.flatMap((b) => b.groups.map((g) => g.kind)))).toEqual(new Set([
      "source", "thread", "attachment", "entity", "predecessor", "successor", "contradicts", "same-relation"
    ]))
    const byId = new Map(batch.map((b) => [b.head.ref.replace(/^rule\/|@\d+$/g, ""), b]))
    const refs = (id: string, kind: string) => groupOf(byId.get(id), kind)?.entries.map((e) => e.ref.replace(/^[a-z]+\/|@\d+$/g, ""))
    // a: b and same1…5 by relation (not the proposal, not the rejected), meeting via Nord, an ancestor of a's Kunde Meier
    expect(groupOf(byId.get(ids.a ?? ""), "same-relation")?.count).toBe(7)
    expect(refs(ids.a ?? "", "same-relation")).toEqual([ids.meeting, ids.b, ids.same5, ids.same4, ids.same3])
    // b: a and same1…5 by one relation, meeting and later (not in force: left out) by the other
    expect(groupOf(byId.get(ids.b ?? ""), "same-relation")?.count).toBe(7)
    expect(refs(ids.b ?? "", "same-relation")).toEqual([ids.meeting, ids.a, ids.same5, ids.same4, ids.same3])
    // meeting: b by relation; plain's link to Nord is an unconfirmed proposal without a minimum
    expect(refs(ids.meeting ?? "", "same-relation")).toEqual([ids.b])
    expect(groupOf(byId.get(ids.alone ?? ""), "same-relation")).toBeUndefined()
    expect(refs(ids.old ?? "", "successor")).toEqual([ids.successor])
    expect(refs(ids.successor ?? "", "predecessor")).toEqual([ids.old])
    expect(refs(ids.successor ?? "", "contradicts")).toEqual([ids.a])
    expect(refs(ids.plain ?? "", "contradicts")).toEqual([ids.same1])
    expect(refs(ids.a ?? "", "thread")?.length).toBe(5)
    expect(groupOf(byId.get(ids.a ?? ""), "attachment")?.count).toBe(3)
    expect(groupOf(byId.get(ids.b ?? ""), "attachment")).toMatchObject({ count: 7, more: 2 })
    expect(byId.get(ids.b ?? "")?.line).toContain("7 attachments (2 unread)")
    expect(byId.get(ids.a ?? "")?.line).toContain("3 attachments (1 unread)")
    expect(byId.get(ids.meeting ?? "")?.groups.map((g) => g.kind)).toEqual(["source", "entity", "same-relation"])
  })

  it("equals buildBundle of each head with proposals, a minimum confidence and another target day", async () => {
    for (const over of [
      { includeProposals: true, minConfidence: 0.8 },
      { includeProposals: true, minConfidence: 0.9, targetDay: "2026-05-02" },
      { targetDay: "2026-03-14", minConfidence: 0.85 }
    ] satisfies Array<Partial<BundleOptions>>) {
      const { batch, alone } = await both({ ...OPTIONS, ...over })
      expect(batch).toEqual(alone)
    }
    const { batch } = await both({ ...OPTIONS, includeProposals: true, minConfidence: 0.8 })
    // the proposal's head and its place in the others' same-relation groups; contradicts marked proposed
    expect(batch.some((b) => b.head.status === "proposed")).toBe(true)
    const a = batch.find((b) => b.head.ref.startsWith(`rule/${ids.a}@`))
    expect(groupOf(a, "same-relation")?.count).toBe(9) // also the proposal and, via Kunde Meier's ancestors, meeting and plain
    const b = batch.find((x) => x.head.ref.startsWith(`rule/${ids.b}@`))
    expect(groupOf(b, "contradicts")?.entries).toMatchObject([{ origin: "proposed", proposed: true }])
    expect(b?.line).toContain("(of which")
  })

  it("equals buildBundle of each head on a file whose lexical tables were never built", async () => {
    await run(config, Effect.flatMap(sqlOf("sales"), (sql) => sql`DELETE FROM lex_meta WHERE key = 'build'`.raw))
    const { batch, alone } = await both({ ...OPTIONS, includeProposals: true, minConfidence: 0.8 })
    expect(batch).toEqual(alone)
    expect(batch.filter((b) => groupOf(b, "same-relation") !== undefined).length).toBeGreaterThan(5)
  })

  it("of no heads is empty; of one head is buildBundle's", async () => {
    const { heads, alone } = await both(OPTIONS)
    const out = await run(config, Effect.flatMap(sqlOf("sales"), (sql) =>
      Effect.all([buildBundles(sql, [], OPTIONS), buildBundles(sql, heads.slice(0, 1), OPTIONS)])))
    expect(out).toEqual([[], alone.slice(0, 1)])
  })
})
