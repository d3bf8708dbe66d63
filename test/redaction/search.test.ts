/**
 * After a redaction, over real HTTP: a search answers no old text (also when the same search was
 * answered and held before), and a later search for the redacted term logs it as the marker.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { OpsStore } from "../../src/db/ops-store.js"
import { applyRedaction, checkpointAfterRedaction } from "../../src/redaction/apply.js"
import { previewRedaction } from "../../src/redaction/preview.js"
import { tempDir, testConfig } from "../support/env.js"
import { sqlOf } from "../support/run.js"
import { startServer, type TestServer } from "../support/server.js"
import { seedScope } from "./seed.js"

let server: TestServer
let cleanup: () => void
let token = ""

const search = async (text: string) => {
  const res = await fetch(`${server.url}/v1/search`, {
    method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ scopes: ["sales"], text, include_proposals: true })
  })
  const raw = await res.text()
  const json = JSON.parse(raw) as { search_id: string; bundles: Array<{ head: { ref: string } }> }
  // the answer without its echo of the asker's own query
  return { status: res.status, body: JSON.stringify(json.bundles), json }
}

const logRow = (id: string) =>
  server.run(Effect.flatMap(sqlOf("sales"), (sql) => sql<{ terms: string; variants: string }>`SELECT terms, variants FROM search_log WHERE id = ${id}`))

const redact = (term: string) =>
  server.run(Effect.gen(function*() {
    const sql = yield* sqlOf("sales")
    const p = yield* previewRedaction(sql, "sales", term)
    const applied = yield* applyRedaction(sql, {
      scope: "sales", term, reason: "erasure request 17", preview: p.body.preview, requestedBy: "person:1", decidedBy: "dpo@example.com",
      at: "2026-03-13T10:00:00Z"
    })
    yield* checkpointAfterRedaction(sql)
    return applied
  }))

beforeAll(async () => {
  const t = tempDir()
  cleanup = t.cleanup
  server = await startServer(testConfig(t.dir))
  await server.run(Effect.gen(function*() {
    yield* seedScope
    const g = yield* OpsStore.pipe(Effect.flatMap((ops) => ops.createGrant({ kind: "service", auth: "bearer", scopes: ["sales"], rights: ["read"] })))
    token = "token" in g ? g.token : ""
  }))
})
afterAll(async () => {
  await server.close()
  cleanup()
})

describe("search after a redaction", () => {
  it("answers no old text, also for a search answered (and held) before; later searches log the term as [redacted]", async () => {
    const before = await search("Petra Müller Rabatt")
    expect(before.status).toBe(200)
    expect(before.json.bundles.map((b) => b.head.ref)).toContain("rule/sales-0001@2")
    expect(before.body).toContain("Müller")
    // the same search again: answered from what the search holds
    expect((await search("Petra Müller Rabatt")).body).toContain("Müller")
    const beforeLog = await logRow(before.json.search_id)
    expect(beforeLog[0]!.terms).toMatch(/m(ü|ue)ller/i)

    await redact("Petra Müller")
    await redact("Müller")

    const after = await search("Petra Müller Rabatt")
    expect(after.status).toBe(200)
    expect(after.body).not.toMatch(/m(ü|ue|u)ller/i)
    const rabatt = await search("Rabatt")
    expect(rabatt.json.bundles.map((b) => b.head.ref)).toContain("rule/sales-0001@2")
    expect(rabatt.body).not.toMatch(/m(ü|ue|u)ller/i)
    expect(rabatt.body).toContain("[redacted]")

    const log = await logRow(after.json.search_id)
    const terms = JSON.parse(log[0]!.terms) as Array<string>
    expect(terms).toContain("[redacted]")
    expect(terms.some((t) => /rabatt/i.test(t))).toBe(true)
    expect(log[0]!.terms + log[0]!.variants).not.toMatch(/m(ü|ue|u)ller|petra/i)
    // the row logged before the redaction was redacted with it
    expect(JSON.stringify(await logRow(before.json.search_id))).not.toMatch(/m(ü|ue|u)ller/i)
  })
})
