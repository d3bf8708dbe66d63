/**
 * The answers' marks agree with the redaction core (src/redaction/**): two scopes seeded alike, one
 * redacted by the core's preview and applyRedaction, the other by the database-level test support
 * (test/support/redaction.ts) that the other answer tests use. Both leave the same text and the
 * same places, and the same reads over real HTTP carry the same `redacted: true` marks.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { OpsStore } from "../../src/db/ops-store.js"
import { ScopeStore } from "../../src/db/scope-store.js"
import { decide } from "../../src/decision/decide.js"
import { propose } from "../../src/domain/proposals.js"
import { storeSource } from "../../src/domain/sources.js"
import { applyRedaction } from "../../src/redaction/apply.js"
import { previewRedaction } from "../../src/redaction/preview.js"
import { tempDir, testConfig } from "../support/env.js"
import { mailProposal, mailSource } from "../support/fixtures.js"
import { redactRows } from "../support/redaction.js"
import { sqlOf } from "../support/run.js"
import { startServer, type TestServer } from "../support/server.js"

const MAIL_ID = "mail:<order-rule@example.com>"
const SCOPES = ["sales", "ops"] as const
let server: TestServer
let cleanup: () => void
let token = ""

type Json = Record<string, unknown>
const get = async (path: string) => {
  const res = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${token}` } })
  return { status: res.status, json: await res.json() as Json }
}

beforeAll(async () => {
  const t = tempDir()
  cleanup = t.cleanup
  server = await startServer(testConfig(t.dir))
  await server.run(Effect.gen(function*() {
    const ops = yield* OpsStore
    const store = yield* ScopeStore
    const a = yield* ops.createGrant({ kind: "service", auth: "bearer", scopes: [...SCOPES], rights: ["read", "propose"] })
    token = "token" in a ? a.token : ""
    for (const scope of SCOPES) {
      yield* store.create(scope)
      yield* storeSource(mailSource({ scope }), a.id)
      yield* propose(mailProposal({ scope }), { grantId: a.id, channel: "api" })
      yield* decide(`${scope}-0001`, { decision: "confirm", version: 1 }, { grantId: "person:9", identity: "p@example.com" })
    }
    // sales: the core finds every place of "Maria" and applies them
    const sales = yield* sqlOf("sales")
    const preview = yield* previewRedaction(sales, "sales", "Maria")
    yield* applyRedaction(sales, {
      scope: "sales", term: "Maria", reason: "erasure request 2026-17", preview: preview.body.preview,
      requestedBy: "person:1", decidedBy: "dpo@example.com", at: "2026-12-01T09:30:00Z"
    })
    // ops: the test support, told the same rows
    yield* redactRows(yield* sqlOf("ops"), "ops", "Maria", [
      { table: "source", key: { id: MAIL_ID }, columns: ["title", "sender", "excerpt"] },
      { table: "rule_version", key: { rule_id: "ops-0001", version: 1 }, columns: ["statement", "quote", "speaker", "reason"] },
      { table: "rule_version", key: { rule_id: "ops-0001", version: 2 }, columns: ["statement", "quote", "speaker", "reason"] }
    ])
  }))
})
afterAll(async () => {
  await server.close()
  cleanup()
})

/** Every `redacted` mark of an answer with the path to it. */
const marked = (v: unknown, at = "", out: Array<string> = []): Array<string> => {
  if (Array.isArray(v)) v.forEach((x, i) => marked(x, `${at}[${i}]`, out))
  else if (typeof v === "object" && v !== null) {
    for (const [k, x] of Object.entries(v)) {
      if (k === "redacted") out.push(`${at}.redacted=${String(x)}`)
      else marked(x, `${at}.${k}`, out)
    }
  }
  return out
}

/** The places and the redacted texts of a scope, with the scope's name taken out of the keys. */
const stateOf = (scope: string) =>
  server.run(Effect.gen(function*() {
    const sql = yield* sqlOf(scope)
    const places = yield* sql<{ tbl: string; key: string; col: string; offsets: string }>`
      SELECT tbl, key, col, offsets FROM redaction_place ORDER BY tbl, key, col`
    const texts = yield* sql`SELECT v.version, v.speaker, v.quote, s.excerpt FROM rule_version v JOIN source s ON s.id = v.source_id ORDER BY v.version`
    return { places: places.map((p) => ({ ...p, key: p.key.replaceAll(`${scope}-`, "<scope>-") })), texts }
  }))

describe("the test support and the redaction core agree", () => {
  it("leave the same places and the same texts", async () => {
    const [core, support] = [await stateOf("sales"), await stateOf("ops")]
    expect(core.places.length).toBeGreaterThan(0)
    expect(support).toEqual(core)
  })

  it("the same reads carry the same marks", async () => {
    for (const path of ["", "/versions", "/provenance"]) {
      const [core, support] = [await get(`/v1/rules/sales-0001${path}`), await get(`/v1/rules/ops-0001${path}`)]
      expect([core.status, support.status]).toEqual([200, 200])
      expect(marked(support.json).map((m) => m.replaceAll("ops-", "sales-"))).toEqual(marked(core.json))
      expect(marked(core.json).length).toBeGreaterThan(0)
    }
  })
})
