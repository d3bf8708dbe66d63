/**
 * Admission control of the public listener over real HTTP (docs/reliability.md, Overload): beyond the bounded
 * queue a request is 503 overloaded at once with Retry-After and the JSON ErrorBody; a greedy
 * grant's flood does not keep another grant's request from being answered; /healthz answers while
 * every slot is taken. The searches are held in a ReadPool layer of the test's (the in-thread pool
 * behind a latch), so the gate's state is exact, not a matter of timing.
 */
import { Effect, Layer, Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ErrorBody } from "../../src/contracts/errors.js"
import { OpsStore } from "../../src/db/ops-store.js"
import { ScopeStore } from "../../src/db/scope-store.js"
import { ReadPool, ReadPoolInThread } from "../../src/read-pool/pool.js"
import { admissionLayer, type Gate } from "../../src/transport/admission.js"
import { tempDir, testConfig } from "../support/env.js"
import { startServer, type TestServer } from "../support/server.js"

let server: TestServer
let cleanup: () => void
let gate: Gate | undefined
const tokens = { a: "", b: "" }
const latch = Effect.runSync(Effect.makeLatch(false))
let entered = 0

/** The in-thread pool, but every search first waits for the latch. */
const HeldPool = Layer.effect(ReadPool, Effect.map(ReadPool, (inner) => ({
  ...inner,
  search: (req: Parameters<typeof inner.search>[0], id: string) =>
    Effect.zipRight(Effect.zipRight(Effect.sync(() => entered++), latch.await), inner.search(req, id))
}))).pipe(Layer.provide(ReadPoolInThread))

const search = async (token: string) => {
  const res = await fetch(`${server.url}/v1/search`, {
    method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ scopes: ["sales"], text: "Lieferzeit" })
  })
  return { status: res.status, headers: res.headers, text: await res.text() }
}

const until = async (what: string, ok: () => boolean) => {
  for (let i = 0; i < 500 && !ok(); i++) await new Promise((r) => setTimeout(r, 10))
  if (!ok()) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(gate?.stats())}`)
}
const stats = () => gate?.stats() ?? { active: 0, queued: 0, rejected: 0, displaced: 0, admitted: 0, peakQueued: 0 }

beforeAll(async () => {
  const t = tempDir("gn-admission-")
  cleanup = t.cleanup
  server = await startServer(testConfig(t.dir, { limits: { requests_per_minute: 10_000 } }), {
    services: { readPool: HeldPool, admission: admissionLayer({ maxActive: 1, maxQueued: 2, retryAfterSeconds: 3 }, (g) => (gate = g)) }
  })
  await server.run(Effect.gen(function*() {
    const ops = yield* OpsStore
    yield* Effect.flatMap(ScopeStore, (s) => s.create("sales"))
    const a = yield* ops.createGrant({ kind: "service", auth: "bearer", scopes: ["sales"], rights: ["read"] })
    const b = yield* ops.createGrant({ kind: "service", auth: "bearer", scopes: ["sales"], rights: ["read"] })
    tokens.a = "token" in a ? a.token : ""
    tokens.b = "token" in b ? b.token : ""
  }))
})
afterAll(async () => {
  Effect.runSync(latch.open)
  await server.close()
  cleanup()
})

describe("admission control on the public listener", () => {
  it("beyond the queue: 503 overloaded at once, Retry-After in seconds, a JSON ErrorBody; /healthz answers meanwhile", async () => {
    entered = 0
    const first = search(tokens.a)
    await until("the first search to hold the slot", () => entered === 1)
    const queued = [search(tokens.a), search(tokens.a)]
    await until("two waiting", () => stats().queued === 2)
    // every slot and the queue are taken: the next request is refused while the others still wait
    const refused = await search(tokens.a)
    expect(refused.status).toBe(503)
    expect(refused.headers.get("retry-after")).toBe("3")
    expect(refused.headers.get("content-type")).toMatch(/^application\/json/)
    const body = Schema.decodeUnknownSync(ErrorBody)(JSON.parse(refused.text))
    expect(body.error).toBe("overloaded")
    expect(body.message).toMatch(/try again in 3 s/)
    // the liveness probe never waits at the gate
    const health = await fetch(`${server.url}/healthz`)
    expect(health.status).toBe(200)
    expect(await health.json()).toEqual({ ok: true })
    expect(stats()).toMatchObject({ active: 1, queued: 2 })
    Effect.runSync(latch.open)
    const answers = await Promise.all([first, ...queued])
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200])
    Effect.runSync(latch.close)
    expect(stats()).toMatchObject({ active: 0, queued: 0 })
  })

  it("fairness per grant: one grant's flood does not keep another grant's request out, and it is answered", async () => {
    entered = 0
    const before = stats()
    const first = search(tokens.a)
    await until("the flood's first search to hold the slot", () => entered === 1)
    const flood = Array.from({ length: 5 }, () => search(tokens.a))
    // three of the five are refused (at once, or after waiting: a connection served less takes a place of one served more)
    const turnedAway = () => stats().rejected + stats().displaced - before.rejected - before.displaced
    await until("the flood to fill the queue", () => stats().queued === 2 && turnedAway() === 3)
    // grant b arrives at a full queue that grant a holds alone: a's newest waiter makes room
    const displacedBefore = stats().displaced
    const other = search(tokens.b)
    await until("b to take a place in the queue", () => stats().displaced === displacedBefore + 1)
    Effect.runSync(latch.open)
    const [b, ...a] = await Promise.all([other, first, ...flood])
    Effect.runSync(latch.close)
    expect(b?.status).toBe(200)
    expect(a.filter((x) => x.status === 200).length).toBe(2)
    expect(a.filter((x) => x.status === 503).length).toBe(4)
    for (const x of a.filter((r) => r.status === 503)) expect(JSON.parse(x.text)).toMatchObject({ error: "overloaded" })
  })

  it("a request refused at the gate costs nothing behind it: no search_log row", async () => {
    entered = 0
    const before = stats()
    const count = () => server.run(Effect.flatMap(Effect.flatMap(ScopeStore, (s) => s.use("sales")), (h) => h.sql<{ n: number }>`SELECT count(*) AS n FROM search_log`))
    const rowsBefore = await count()
    const first = search(tokens.b)
    await until("the slot", () => entered === 1)
    const more = Array.from({ length: 6 }, () => search(tokens.b))
    await until("four turned away", () => stats().queued === 2 && stats().rejected + stats().displaced - before.rejected - before.displaced === 4)
    Effect.runSync(latch.open)
    const answers = await Promise.all([first, ...more])
    Effect.runSync(latch.close)
    expect(answers.filter((a) => a.status === 200).length).toBe(3)
    expect(answers.filter((a) => a.status === 503).length).toBe(4)
    const rowsAfter = await count()
    expect((rowsAfter[0]?.n ?? 0) - (rowsBefore[0]?.n ?? 0)).toBe(3)
  })
})
