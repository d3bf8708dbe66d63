/**
 * What a search keeps per connection in the read pool's workers, through writes of the main
 * thread (their notes reach the workers over a BroadcastChannel: src/search/lexical/stamp-cache.ts),
 * against random sequences of writes (test/search/random-writes.ts): after every write, POST
 * /v1/search, answered in a worker, gives the bundles, query and abstention a search reading
 * everything from the file gives. A failure names the seed, the steps up to it and the question.
 */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { OpsStore } from "../../src/db/ops-store.js"
import { ReadPool, readPoolLayer } from "../../src/read-pool/pool.js"
import { lexicalIndexLayer } from "../../src/search/lexical/index.js"
import { lexicalOptions } from "../../src/search/lexical/options.js"
import { search } from "../../src/search/search.js"
import { SALES_RULES, SEARCH_ID, writeSales } from "../search/cache-support.js"
import { randomWrites } from "../search/random-writes.js"
import { tempDir, testConfig } from "../support/env.js"
import { run } from "../support/run.js"
import { startServer } from "../support/server.js"

const SEEDS = [7, 19]
const STEPS = 15
const QUESTIONS_PER_STEP = 3

const day = (ms: number): string => new Date(ms).toISOString().slice(0, 10)

describe("what a worker's search keeps through random writes of the main thread", () => {
  for (const seed of SEEDS) {
    it(`answers as the file does after every write (seed ${seed})`, async () => {
      const { dir, cleanup } = tempDir("gn-pool-random-")
      // the questions come faster than a client's limit per minute allows
      const config = testConfig(dir, { limits: { requests_per_minute: 100_000 } })
      await writeSales(config, SALES_RULES)
      // every search goes to a worker
      const server = await startServer(config, { services: { readPool: readPoolLayer({ loneInThread: false }) } })
      const log: Array<string> = []
      try {
        const token = await server.run(Effect.gen(function*() {
          const grant = yield* (yield* OpsStore).createGrant({ kind: "service", auth: "bearer", scopes: ["sales"], rights: ["read"] })
          yield* Effect.flatMap(ReadPool, (p) => p.warm)
          return "token" in grant ? grant.token : ""
        }))
        const before = await server.run(Effect.flatMap(ReadPool, (p) => p.stats))
        const now = Date.now()
        const writes = randomWrites(seed, server.run, { today: day(now), yesterday: day(now - 86_400_000), now: new Date(now).toISOString() })
        const compare = async () => {
          for (let q = 0; q < QUESTIONS_PER_STEP; q++) {
            const text = writes.question()
            const request = { scopes: ["sales"], text, include_proposals: true, limit: 10 }
            const res = await fetch(`${server.url}/v1/search`, {
              method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(request)
            })
            expect(res.status).toBe(200)
            const pooled = await res.json() as { bundles: unknown; query: unknown; abstained: unknown }
            const fresh = (await run(config, search({ ...request, cross_scope: false, as_of: null }, SEARCH_ID).pipe(
              Effect.provide(lexicalIndexLayer(lexicalOptions(config.file.search), { cache: false }))
            ))).response
            const context = `seed ${seed}, after: ${log.join(" | ")}; question "${text}"`
            expect({ bundles: pooled.bundles, query: pooled.query, abstained: pooled.abstained }, context)
              .toEqual({ bundles: fresh.bundles, query: fresh.query, abstained: fresh.abstained })
          }
        }
        await compare()
        for (let s = 0; s < STEPS; s++) {
          log.push(await writes.step())
          await compare()
        }
        // every question was answered by a worker, or by a worker's answer held while no write came between
        const after = await server.run(Effect.flatMap(ReadPool, (p) => p.stats))
        expect(after.inThread).toBe(before.inThread)
        expect(after.inWorker - before.inWorker + after.held - before.held).toBe((STEPS + 1) * QUESTIONS_PER_STEP)
        expect(after.inWorker - before.inWorker).toBeGreaterThan(after.held - before.held)
      } finally {
        await server.close()
        cleanup()
      }
    }, 180_000)
  }
})
