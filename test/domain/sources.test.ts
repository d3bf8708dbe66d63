import { Effect } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { ScopeStore, scopeFile } from "../../src/db/scope-store.js"
import { canonicalJson } from "../../src/domain/canonical-json.js"
import { SOURCE_CONFLICT_MESSAGE } from "../../src/domain/sources.js"
import { parseInclude } from "../../src/domain/source-schemas.js"
import { readSource, sha256Hex, storeSource } from "../../src/domain/sources.js"
import { tempDir, testConfig } from "../support/env.js"
import { jamieSource, MAIL_TEXT, mailSource } from "../support/fixtures.js"
import { captureLogs } from "../support/logs.js"
import { counts, fileHash, run, runFail, sqlOf } from "../support/run.js"

let dir: string
let cleanup: () => void
let config: ReturnType<typeof testConfig>

beforeEach(async () => {
  ;({ dir, cleanup } = tempDir())
  config = testConfig(dir)
  await run(config, Effect.flatMap(ScopeStore, (s) => Effect.zip(s.create("sales"), s.create("ops"))))
})
afterEach(() => cleanup())

describe("storing sources", () => {
  it("stores a mail with its attachments as received and its SHA-256", async () => {
    const res = await run(config, storeSource(mailSource(), "service:1"))
    expect(res).toEqual({ created: true, id: "mail:<order-rule@example.com>" })
    const rows = await run(config, Effect.gen(function*() {
      const sql = yield* sqlOf("sales")
      const src = yield* sql`SELECT * FROM source`
      const att = yield* sql`SELECT * FROM source_attachment ORDER BY n`
      return { src, att }
    }))
    expect(rows.src[0]).toMatchObject({
      kind: "mail", title: "Bestellungen Hakenleisten", excerpt: MAIL_TEXT, feeder: "service:1",
      fulltext_sha256: sha256Hex(MAIL_TEXT), occurred_at: "2026-03-12T09:15:00Z", thread: null
    })
    expect(rows.att).toMatchObject([
      { n: 1, filename: "preisliste.pdf", text: "Preisliste 2026", text_origin: "ocr", external: "paperless:12", size: 1234 },
      { n: 2, filename: "foto.jpg", text: null, text_origin: "none" }
    ])
  })

  it("stores a jamie transcript with segments numbered by position and the hash of their canonical JSON", async () => {
    const req = jamieSource()
    await run(config, storeSource(req, "service:1"))
    const rows = await run(config, Effect.gen(function*() {
      const sql = yield* sqlOf("sales")
      return {
        seg: yield* sql<{ n: number; start_s: number }>`SELECT n, start_s, speaker FROM source_segment ORDER BY n`,
        src: yield* sql<{ fulltext_sha256: string; excerpt: string | null }>`SELECT fulltext_sha256, excerpt FROM source`
      }
    }))
    expect(rows.seg.map((s) => s.n)).toEqual([1, 2, 3, 4])
    expect(rows.src[0]?.excerpt).toBeNull()
    expect(rows.src[0]?.fulltext_sha256).toBe(sha256Hex(canonicalJson(req.segments)))
    expect(canonicalJson(req.segments?.slice(0, 1))).toBe("[{\"speaker\":\"Tom\",\"start_s\":0,\"text\":\"Good morning everyone, let's start.\"}]")
  })

  it("answers an identical repeat with created: false and writes nothing", async () => {
    await run(config, storeSource(mailSource(), "service:1"))
    const file = scopeFile(dir, "sales")
    const before = { hash: fileHash(file), counts: await run(config, Effect.flatMap(sqlOf("sales"), counts)) }
    const again = await run(config, storeSource(mailSource(), "service:1"))
    expect(again).toEqual({ created: false, id: "mail:<order-rule@example.com>" })
    expect(await run(config, Effect.flatMap(sqlOf("sales"), counts))).toEqual(before.counts)
    expect(fileHash(file)).toBe(before.hash)
  })

  const conflicts: ReadonlyArray<[string, string, ReturnType<typeof mailSource>, string]> = [
    ["another grant", "service:2", mailSource(), "other-feeder"],
    ["a different title", "service:1", mailSource({ source: { ...mailSource().source, title: "Other" } }), "source-differs"],
    ["a different text", "service:1", mailSource({ text: `${MAIL_TEXT}!` }), "source-differs"],
    ["a longer attachment list", "service:1", mailSource({ attachments: [...mailSource().attachments, { filename: "x.txt", media_type: "text/plain", size: 1, external: null, text: null, text_origin: null }] }), "attachments-differ"],
    ["a changed attachment", "service:1", mailSource({ attachments: [mailSource().attachments[1]!, mailSource().attachments[0]!] }), "attachments-differ"]
  ]
  for (const [name, grant, req, reason] of conflicts) {
    it(`refuses a repeat with ${name}: source-conflict, one generic message, the reason only in the log, nothing written`, async () => {
      await run(config, storeSource(mailSource(), "service:1"))
      const file = scopeFile(dir, "sales")
      const before = fileHash(file)
      const logs = captureLogs()
      const err = await runFail(config, storeSource(req, grant).pipe(Effect.provide(logs.layer)))
      expect(err).toMatchObject({ _tag: "SourceConflict", message: SOURCE_CONFLICT_MESSAGE })
      expect(err.message).not.toContain(reason)
      expect(logs.lines.find((l) => l.message === "source-conflict")?.annotations).toMatchObject({ reason, grant, scope: "sales" })
      expect(fileHash(file)).toBe(before)
    })
  }

  it("keeps the same id apart in two scopes", async () => {
    await run(config, storeSource(mailSource(), "service:1"))
    expect(await run(config, storeSource(mailSource({ scope: "ops" }), "service:2"))).toEqual({ created: true, id: "mail:<order-rule@example.com>" })
  })
})

describe("reading a source back (§6.2a)", () => {
  beforeEach(async () => {
    await run(config, storeSource(mailSource(), "service:1"))
    await run(config, storeSource(jamieSource(), "service:1"))
  })

  it("answers metadata, hash and the attachment list without content by default", async () => {
    const out = await run(config, readSource("sales", "mail:<order-rule@example.com>", "service:1", new Set()))
    expect(out).toMatchObject({
      id: "mail:<order-rule@example.com>", scope: "sales", kind: "mail", text_chars: [...MAIL_TEXT].length,
      segment_count: null, fulltext_sha256: sha256Hex(MAIL_TEXT)
    })
    expect(out.text).toBeUndefined()
    expect(out.attachments[0]).toEqual({
      ref: "attachment/mail:<order-rule@example.com>#1", n: 1, filename: "preisliste.pdf", media_type: "application/pdf",
      size: 1234, external: "paperless:12", text_origin: "ocr"
    })
    expect(Object.keys(out)).not.toContain("feeder")
  })

  it("adds the text and the attachment texts on request", async () => {
    const out = await run(config, readSource("sales", "mail:<order-rule@example.com>", "service:1", parseInclude("text,attachments")!))
    expect(out.text).toBe(MAIL_TEXT)
    expect(out.attachments.map((a) => a.text)).toEqual(["Preisliste 2026", null])
    const jamie = await run(config, readSource("sales", "jamie:meeting-2026-03-12", "service:1", parseInclude("text")!))
    expect(jamie.segment_count).toBe(4)
    expect(jamie.segments?.[1]).toEqual({ start_s: 100, speaker: "Maria", text: "From now on we always ask the supplier for the delivery time" })
  })

  it("answers the same 404 for an unknown id, another grant's source and another scope", async () => {
    const unknown = await runFail(config, readSource("sales", "mail:<nope@x>", "service:1", new Set()))
    const foreign = await runFail(config, readSource("sales", "mail:<order-rule@example.com>", "service:2", new Set()))
    const otherScope = await runFail(config, readSource("ops", "mail:<order-rule@example.com>", "service:1", new Set()))
    expect(unknown._tag).toBe("NotFound")
    expect(JSON.stringify(foreign)).toBe(JSON.stringify(unknown))
    expect(JSON.stringify(otherScope)).toBe(JSON.stringify(unknown))
  })

  it("parses include as a comma list of text and attachments, each at most once", () => {
    expect(parseInclude(undefined)).toEqual(new Set())
    expect(parseInclude("attachments,text")).toEqual(new Set(["attachments", "text"]))
    expect(parseInclude("text,text")).toBeNull()
    expect(parseInclude("segments")).toBeNull()
    expect(parseInclude("")).toBeNull()
  })
})
