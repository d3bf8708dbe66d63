/**
 * The read pool (src/read-pool/): searches and exports run in worker threads on read-only
 * connections, with the same answers as on the main thread, and every search sees every write the
 * client was answered about (read-your-writes), over real HTTP on a real server.
 */
import { availableParallelism } from "node:os"
import { gunzipSync } from "node:zlib"
import { Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { OpsStore } from "../../src/db/ops-store.js"
import { ScopeStore } from "../../src/db/scope-store.js"
import { decide } from "../../src/decision/decide.js"
import { propose } from "../../src/domain/proposals.js"
import { storeSource } from "../../src/domain/sources.js"
import { InFlight } from "../../src/read-pool/in-flight.js"
import { ReadPool, ReadPoolInThread, readPoolLayer } from "../../src/read-pool/pool.js"
import { search } from "../../src/search/search.js"
import { SearchStages } from "../../src/search/stage.js"
import { tempDir, testConfig } from "../support/env.js"
import { jamieSource, mailProposal, mailSource, manualProposal } from "../support/fixtures.js"
import { startServer, type TestServer } from "../support/server.js"

/** the text of a rendered search's bytes */
const textOf = (bytes: Uint8Array): string => new TextDecoder().decode(bytes)

let server: TestServer
let cleanup: () => void
let token = ""

const post = async (path: string, body: unknown) => {
  const res = await fetch(`${server.url}${path}`, {
    method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(body)
  })
  const text = await res.text()
  return { status: res.status, json: JSON.parse(text) as Record<string, unknown> }
}

interface Answer {
  readonly bundles: ReadonlyArray<{ readonly head: { readonly ref: string }; readonly line: string }>
  readonly abstained: unknown
  readonly query: unknown
}

const stats = () => server.run(Effect.flatMap(ReadPool, (p) => p.stats))

/** Made-up words, one per proposal: only that proposal can match its word. */
const marker = (i: number) => `zq${"bcdfghjklmnpqrstvwx"[i % 19] ?? "b"}${"aeiou"[i % 5] ?? "a"}rt${i}`

beforeAll(async () => {
  const t = tempDir("gn-pool-")
  cleanup = t.cleanup
  // every search that may goes to a worker (a lone search would run on this thread: see "a lone search" below)
  server = await startServer(testConfig(t.dir), { services: { readPool: readPoolLayer({ loneInThread: false }) } })
  await server.run(Effect.gen(function*() {
    const ops = yield* OpsStore
    const store = yield* ScopeStore
    yield* store.create("sales")
    yield* store.create("ops")
    const grant = yield* ops.createGrant({ kind: "service", auth: "bearer", scopes: ["sales", "ops"], rights: ["read", "propose"] })
    token = "token" in grant ? grant.token : ""
    yield* storeSource(mailSource(), grant.id)
    const by = { grantId: grant.id, channel: "api" as const }
    const person = { grantId: "person:9", identity: "p@example.com" }
    yield* propose(mailProposal(), by)
    yield* decide("sales-0001", { decision: "confirm", version: 1 }, person)
    for (let i = 0; i < 12; i++) {
      yield* propose(manualProposal(`Sales checks the delivery time of order batch ${i} with the carrier`, { keywords: ["Lieferzeit"], relations: [] }), by)
    }
    // the workers are up: from here every search and export runs in one of them
    yield* Effect.flatMap(ReadPool, (p) => p.warm)
  }))
}, 180_000)
afterAll(async () => {
  await server.close()
  cleanup()
})

describe("the read pool", () => {
  it("runs POST /v1/search in a worker and answers what search() on the main thread answers", async () => {
    const before = await stats()
    expect(before).toMatchObject({ kind: "workers", ready: before.size })
    // the default size: one worker more than the cores, at most four
    expect(before.size).toBe(Math.min(4, availableParallelism() + 1))
    const request = { scopes: ["sales"], text: "Lieferzeit Hakenleiste Bestellung", include_proposals: true, limit: 10 }
    const r = await post("/v1/search", request)
    expect(r.status).toBe(200)
    const after = await stats()
    expect(after.inWorker).toBe(before.inWorker + 1)
    expect(after.inThread).toBe(before.inThread)
    const pooled = r.json as unknown as Answer
    expect(pooled.bundles.length).toBeGreaterThan(1)
    // the same request through search() on this thread (the decoded request: defaults filled in)
    const local = await server.run(search({ ...request, cross_scope: false, as_of: null, include_proposals: true }, "00000000-0000-4000-8000-000000000000"))
    expect(pooled.bundles).toEqual(local.response.bundles)
    expect(pooled.abstained).toEqual(local.response.abstained)
    expect(pooled.query).toEqual(local.response.query)
  })

  it("workers look words up in the main thread's lexicon (shared memory, not a copy each): a question only the lexicon links answers as on the main thread", async () => {
    const before = await stats()
    expect(before.lexiconShared).toBe(before.size)
    // "Frachtführer" is nowhere in the scope: only the lexicon's "carrier" finds the proposals
    const request = { scopes: ["sales"], text: "Frachtführer", include_proposals: true, limit: 10 }
    const r = await post("/v1/search", request)
    expect(r.status).toBe(200)
    expect((await stats()).inWorker).toBe(before.inWorker + 1)
    const pooled = r.json as unknown as Answer
    expect(pooled.bundles.length).toBeGreaterThan(0)
    const local = await server.run(search({ ...request, cross_scope: false, as_of: null }, "00000000-0000-4000-8000-000000000000"))
    expect(pooled.bundles).toEqual(local.response.bundles)
  })

  it("hands the search back from the worker as the bytes of its JSON with its heads in order, the body POST /v1/search sends", async () => {
    const before = await stats()
    // not the first test's request (its answer is held on this thread now: below)
    const request = { scopes: ["sales"], cross_scope: false, text: "Hakenleiste Lieferzeit Bestellung", as_of: null, include_proposals: true, limit: 10 }
    const rendered = await server.run(Effect.flatMap(ReadPool, (p) => p.search(request, "00000000-0000-4000-8000-000000000001")))
    expect((await stats()).inWorker).toBe(before.inWorker + 1)
    // bytes crossed the thread boundary (their buffer moved, whole), not a clone of the answer
    expect(rendered.body).toBeInstanceOf(Uint8Array)
    expect(rendered.body.byteLength).toBe(rendered.body.buffer.byteLength)
    const answer = JSON.parse(textOf(rendered.body)) as {
      readonly search_id: string
      readonly bundles: ReadonlyArray<{ readonly head: { readonly scope: string; readonly ref: string } }>
    }
    expect(answer.search_id).toBe("00000000-0000-4000-8000-000000000001")
    expect(answer.bundles.length).toBeGreaterThan(1)
    expect(rendered.heads).toEqual(answer.bundles.map((b) => ({ scope: b.head.scope, ref: b.head.ref })))
    expect(rendered.perScope.map((s) => s.scope)).toEqual(["sales"])
    const local = await server.run(search(request, "00000000-0000-4000-8000-000000000001"))
    expect(answer.bundles).toEqual(local.response.bundles)
    // over HTTP the body is that text: the same bundles, and the content type of JSON
    const res = await fetch(`${server.url}/v1/search`, {
      method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ scopes: ["sales"], text: "Lieferzeit Hakenleiste Bestellung", include_proposals: true })
    })
    expect(res.headers.get("content-type")).toBe("application/json")
    const body = await res.text()
    expect((JSON.parse(body) as Answer).bundles).toEqual(answer.bundles)
  })

  it("answers a search asked a third time from the worker's answer held on this thread while every scope's stamps are the same; a write sends it to a worker", async () => {
    const request = { scopes: ["sales"], cross_scope: false, text: "carrier batch Lieferzeit", as_of: null, include_proposals: true, limit: 30 }
    const ask = (id: string, over: Partial<typeof request> = {}) => server.run(Effect.flatMap(ReadPool, (p) => p.search({ ...request, ...over }, id)))
    const s0 = await stats()
    // the first time the request is only noted, the second time its answer is held
    const first = await ask("00000000-0000-4000-8000-0000000000a1")
    await ask("00000000-0000-4000-8000-0000000000a0")
    const s1 = await stats()
    expect([s1.inWorker - s0.inWorker, s1.held - s0.held]).toEqual([2, 0])
    const again = await ask("00000000-0000-4000-8000-0000000000a2")
    const s2 = await stats()
    expect([s2.inWorker - s1.inWorker, s2.held - s1.held]).toEqual([0, 1])
    // the worker's text with its own search_id, and stage a took no time
    type Body = { search_id: string; stages: { a: { duration_ms: number | null } }; bundles: Array<unknown> }
    const a = JSON.parse(textOf(first.body)) as Body
    const b = JSON.parse(textOf(again.body)) as Body
    expect(a.bundles.length).toBeGreaterThan(1)
    expect(b.search_id).toBe("00000000-0000-4000-8000-0000000000a2")
    expect(b.stages.a.duration_ms).toBe(0)
    expect({ ...b, search_id: a.search_id, stages: { ...b.stages, a: a.stages.a } }).toEqual(a)
    expect(textOf(again.body.subarray(again.tailAt))).toBe(textOf(first.body.subarray(first.tailAt)))
    expect(again.heads).toEqual(first.heads)
    expect(again.perScope.map((x) => ({ ...x, stages: null }))).toEqual(first.perScope.map((x) => ({ ...x, stages: null })))
    // another field of the request: not that answer
    await ask("00000000-0000-4000-8000-0000000000a3", { limit: 3 })
    const s3 = await stats()
    expect([s3.inWorker - s2.inWorker, s3.held - s2.held]).toEqual([1, 0])
    // a write the lexical index never sees (a stored source moves the content stamp): a worker again
    await server.run(storeSource(jamieSource(), "service:1"))
    await ask("00000000-0000-4000-8000-0000000000a4")
    const s4 = await stats()
    expect([s4.inWorker - s3.inWorker, s4.held - s3.held]).toEqual([1, 0])
    // a proposal that answers it: a worker, and the new rule is in the answer
    const created = await post("/v1/proposals", manualProposal("Sales asks the carrier about batch Lieferzeit of crates", { keywords: ["Lieferzeit"], relations: [] }))
    expect(created.status).toBe(201)
    const after = await ask("00000000-0000-4000-8000-0000000000a5")
    const s5 = await stats()
    expect([s5.inWorker - s4.inWorker, s5.held - s4.held]).toEqual([1, 0])
    expect(after.heads.map((h) => h.ref)).toContain(created.json.ref)
    // and asked once more, held again
    await ask("00000000-0000-4000-8000-0000000000a6")
    expect((await stats()).held - s5.held).toBe(1)
  })

  it("read-your-writes: a proposal answered 201 is found by the very next search, every time", async () => {
    const before = await stats()
    for (let i = 0; i < 20; i++) {
      const word = marker(i)
      const created = await post("/v1/proposals", manualProposal(`Sales keeps the ${word} crates in aisle ${i} of the warehouse`, { keywords: [word], relations: [] }))
      expect(created.status).toBe(201)
      const ref = created.json.ref as string
      const found = await post("/v1/search", { scopes: ["sales"], text: word, include_proposals: true })
      expect(found.status).toBe(200)
      expect((found.json as unknown as Answer).bundles.map((b) => b.head.ref)).toEqual([ref])
    }
    const after = await stats()
    expect(after.inWorker - before.inWorker).toBe(20)
  })

  it("a confirmation is seen by the next search too (a write that changes an answer, not only adds to it)", async () => {
    const word = marker(99)
    const created = await post("/v1/proposals", manualProposal(`Sales stacks the ${word} pallets two high at most`, { keywords: [word], relations: [] }))
    const id = /^rule\/(.+)@1$/.exec(created.json.ref as string)?.[1] ?? ""
    const hidden = await post("/v1/search", { scopes: ["sales"], text: word })
    expect((hidden.json as unknown as Answer).bundles).toEqual([])
    await server.run(decide(id, { decision: "confirm", version: 1 }, { grantId: "person:9", identity: "p@example.com" }))
    const shown = await post("/v1/search", { scopes: ["sales"], text: word })
    expect((shown.json as unknown as Answer).bundles.map((b) => b.head.ref)).toEqual([`rule/${id}@2`])
  })

  it("exports a scope in a worker: the same archive as on the main thread", async () => {
    const before = await stats()
    const opts = { zone: "Europe/Berlin", now: Date.UTC(2026, 2, 12, 9, 15) }
    const pooled = await server.run(Effect.flatMap(ReadPool, (p) => p.exportArchive("sales", opts)))
    const local = await server.run(Effect.flatMap(ReadPool, (p) => p.exportArchive("sales", opts)).pipe(Effect.provide(ReadPoolInThread)))
    expect((await stats()).inWorker).toBe(before.inWorker + 1)
    const tar = gunzipSync(pooled)
    expect(tar.equals(gunzipSync(local))).toBe(true)
    expect(tar.toString("latin1")).toContain("sales-0001.md")
  })

  it("a scope the worker has not opened yet (empty) answers no-candidate from the worker", async () => {
    const before = await stats()
    const r = await post("/v1/search", { scopes: ["ops"], text: "Lieferzeit" })
    expect(r.status).toBe(200)
    expect(r.json).toMatchObject({ bundles: [], abstained: { reason: "no-candidate" } })
    expect((await stats()).inWorker).toBe(before.inWorker + 1)
  })
})

describe("a search where stage b runs", () => {
  it("stays on the main thread (the stage's model lives there); one where no stage runs goes to the worker", async () => {
    const t = tempDir("gn-pool-b-")
    // a stage b that would run for scope sales (availability null) and is off for ops
    const stages = Layer.succeed(SearchStages, { stages: [{ name: "b" as const, availability: (scope: string) => (scope === "sales" ? null : { state: "off" as const, duration_ms: null, reason: "not here" }) }] })
    const other = await startServer(testConfig(t.dir), { services: { searchStages: stages, readPool: readPoolLayer({ size: 1, loneInThread: false }) } })
    try {
      const key = await other.run(Effect.gen(function*() {
        yield* Effect.flatMap(ScopeStore, (s) => Effect.all([s.create("sales"), s.create("ops")]))
        const grant = yield* Effect.flatMap(OpsStore, (o) => o.createGrant({ kind: "service", auth: "bearer", scopes: ["sales", "ops"], rights: ["read"] }))
        yield* Effect.flatMap(ReadPool, (p) => p.warm)
        return "token" in grant ? grant.token : ""
      }))
      const ask = (scope: string) => fetch(`${other.url}/v1/search`, {
        method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ scopes: [scope], text: "Lieferzeit" })
      }).then(async (r) => ({ status: r.status, body: await r.json() as { stages: { b: { state: string; reason: string | null } } } }))
      const poolStats = () => other.run(Effect.flatMap(ReadPool, (p) => p.stats))
      const s0 = await poolStats()
      const withB = await ask("sales")
      const s1 = await poolStats()
      expect(withB.status).toBe(200)
      expect(withB.body.stages.b.state).toBe("ran")
      expect([s1.inThread - s0.inThread, s1.inWorker - s0.inWorker]).toEqual([1, 0])
      const withoutB = await ask("ops")
      const s2 = await poolStats()
      expect(withoutB.body.stages.b).toMatchObject({ state: "off", reason: "not here" })
      expect([s2.inThread - s1.inThread, s2.inWorker - s1.inWorker]).toEqual([0, 1])
    } finally {
      await other.close()
      t.cleanup()
    }
  }, 180_000)
})

describe("a lone search", () => {
  it("runs on the calling thread; with another request in flight it goes to a worker, and so does a lone one until the service has been quiet", async () => {
    const t = tempDir("gn-pool-lone-")
    const other = await startServer(testConfig(t.dir), { services: { readPool: readPoolLayer({ size: 2, loneQuietMs: 2_000 }) } })
    try {
      await other.run(Effect.gen(function*() {
        yield* Effect.flatMap(ScopeStore, (s) => s.create("sales"))
        const grant = yield* Effect.flatMap(OpsStore, (o) => o.createGrant({ kind: "service", auth: "bearer", scopes: ["sales"], rights: ["read", "propose"] }))
        const by = { grantId: grant.id, channel: "api" as const }
        for (let i = 0; i < 6; i++) {
          yield* propose(manualProposal(`Sales checks the delivery time of order batch ${i} with the carrier`, { keywords: ["Lieferzeit"], relations: [] }), by)
        }
        yield* Effect.flatMap(ReadPool, (p) => p.warm)
      }))
      const request = { scopes: ["sales"], cross_scope: false, text: "Lieferzeit carrier", as_of: null, include_proposals: true, limit: 10 }
      const one = (id: number, text: string) => other.run(Effect.flatMap(ReadPool, (p) => p.search({ ...request, text }, `00000000-0000-4000-8000-00000000000${id}`)))
      // the listener's count of requests in flight, as the public listener keeps it
      const inFlight = await other.run(InFlight)
      // each request once to a worker: a request asked again there is answered from its held text (held.ts)
      const where = async (id: number, text = request.text) => {
        const s0 = await other.run(Effect.flatMap(ReadPool, (p) => p.stats))
        const answer = await one(id, text)
        const s1 = await other.run(Effect.flatMap(ReadPool, (p) => p.stats))
        return { at: s1.inThread - s0.inThread === 1 && s1.inWorker === s0.inWorker ? "thread" : s1.inWorker - s0.inWorker === 1 ? "worker" : "?", bundles: (JSON.parse(textOf(answer.body)) as Answer).bundles }
      }
      const alone = await where(1)
      expect(alone.at).toBe("thread")
      expect(alone.bundles.length).toBe(6)
      // this search's own request and one more in flight: a worker, with the same answer
      inFlight.enter()
      inFlight.enter()
      const beside = await where(2)
      inFlight.leave()
      inFlight.leave()
      expect(beside).toEqual({ at: "worker", bundles: alone.bundles })
      // right after the overlap a lone search still goes to a worker …
      expect((await where(3, "carrier Lieferzeit")).at).toBe("worker")
      // … and once the service has been quiet for loneQuietMs, to this thread again
      await new Promise((r) => setTimeout(r, 2_100))
      expect((await where(4)).at).toBe("thread")
    } finally {
      await other.close()
      t.cleanup()
    }
  }, 180_000)
})
