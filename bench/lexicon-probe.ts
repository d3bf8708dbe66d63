/**
 * The child of bench/lexicon.ts: a process of its own (nothing loaded before it), it reads the
 * shipped lexicon once, then looks up the words of its argument; it reports one JSON message to
 * its parent (process.send) and exits.
 */
import { normalizeTerm, shippedLexicon } from "../src/search/lexical/lexicon.js"
import type { LexiconLang } from "../src/search/lexical/lexicon.js"

export interface LexiconProbeJob {
  readonly words: ReadonlyArray<readonly [LexiconLang, string]>
  readonly lookups: number
}

export interface LexiconProbeAnswer {
  readonly loadMs: number
  readonly loadCpuMs: number
  /** resident set size after a garbage collection, before and right after the load (bytes) */
  readonly rssBefore: number
  readonly rssAfter: number
  /**
   * the same once the load's scratch memory is given back (bytes): V8 frees large array buffers on
   * a thread of its own after a collection, so right after one the scratch still counts
   */
  readonly rssSettled: number
  readonly heapAfter: number
  readonly groups: number
  readonly terms: number
  readonly lookupsPerSecond: number
  /** how many of the words have a group */
  readonly found: number
}

const gc = (): void => (globalThis as { gc?: () => void }).gc?.()

const job = JSON.parse(process.argv[2] ?? "{}") as LexiconProbeJob
gc()
const rssBefore = process.memoryUsage().rss
const cpu0 = process.cpuUsage()
const t0 = performance.now()
const lexicon = shippedLexicon()
const loadMs = performance.now() - t0
const cpu = process.cpuUsage(cpu0)
gc()
const memory = process.memoryUsage()
/** RSS after collections 100 ms apart, once two in a row differ by less than 1 MB (at most 3 s) */
const settledRss = async (): Promise<number> => {
  let last = process.memoryUsage().rss
  for (let i = 0; i < 30; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100))
    gc()
    const now = process.memoryUsage().rss
    if (Math.abs(now - last) < 1_000_000) return now
    last = now
  }
  return last
}
const rssSettled = await settledRss()
if (lexicon === null) {
  process.send?.({ error: "the lexicon did not load" })
} else {
  const words = job.words.map(([lang, w]) => [lang, normalizeTerm(w)] as const)
  const found = words.filter(([lang, w]) => lexicon.groupsOf(lang, w).length > 0).length
  const t1 = performance.now()
  let n = 0
  for (let i = 0; i < job.lookups; i++) {
    const [lang, w] = words[i % words.length] ?? ["de", ""]
    n += lexicon.groupsOf(lang, w).length
  }
  const seconds = (performance.now() - t1) / 1000
  const answer: LexiconProbeAnswer = {
    loadMs, loadCpuMs: (cpu.user + cpu.system) / 1000, rssBefore, rssAfter: memory.rss, rssSettled, heapAfter: memory.heapUsed,
    groups: lexicon.groups, terms: lexicon.terms, lookupsPerSecond: n >= 0 ? job.lookups / seconds : 0, found
  }
  process.send?.(answer)
}
