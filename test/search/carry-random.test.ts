/**
 * Everything a search keeps per connection through writes (src/search/lexical/stamp-cache.ts and
 * its carriers: vocabulary, starts of words, typo lists, rule counts, phrase rows, explained rows,
 * a word's analysis), against random sequences of writes (random-writes.ts): after every write of
 * this process, a search on the connection that wrote answers exactly what a search reading
 * everything from the file answers. A failure names the seed, the steps up to it and the question.
 */
import { describe, expect, it } from "vitest"
import { search } from "../../src/search/search.js"
import { tempDir, testConfig } from "../support/env.js"
import { answerOf, at, freshAnswer, SALES_RULES, salesRequest, SEARCH_ID, serviceOf, writeSales } from "./cache-support.js"
import { randomWrites, type Writer } from "./random-writes.js"

const SEEDS = [11, 23, 47, 89, 131]
const STEPS = 20
const QUESTIONS_PER_STEP = 3

describe("what a search keeps through random writes", () => {
  for (const seed of SEEDS) {
    it(`answers as the file does after every write (seed ${seed})`, async () => {
      const { dir, cleanup } = tempDir()
      const config = testConfig(dir)
      await writeSales(config, SALES_RULES)
      const service = serviceOf(config)
      const log: Array<string> = []
      try {
        const write: Writer = (effect) => service.runPromise(at(effect))
        const writes = randomWrites(seed, write, { today: "2026-06-15", yesterday: "2026-06-14", now: "2026-06-15T12:00:00.000Z" })
        const compare = async () => {
          for (let q = 0; q < QUESTIONS_PER_STEP; q++) {
            const text = writes.question()
            const held = answerOf(await service.runPromise(at(search(salesRequest({ text }), SEARCH_ID))))
            const fresh = await freshAnswer(config, salesRequest({ text }))
            expect(held, `seed ${seed}, after: ${log.join(" | ")}; question "${text}"`).toEqual(fresh)
          }
        }
        await compare()
        for (let s = 0; s < STEPS; s++) {
          log.push(await writes.step())
          await compare()
        }
      } finally {
        await service.dispose()
        cleanup()
      }
    }, 120_000)
  }
})
