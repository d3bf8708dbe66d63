/**
 * The part lexicon: stage a's lexicon (share/lexicon/lexicon.txt.gz) as a process meets it — the
 * file's bytes on disk and unpacked, the load in a fresh process (wall and CPU time, median of 5
 * processes), the resident memory it adds, and lookups per second (groupsOf with the groups
 * made, business words of both languages and words it does not hold, in turn).
 */
import { fork } from "node:child_process"
import { readFileSync, statSync } from "node:fs"
import { gunzipSync } from "node:zlib"
import { lexiconFilePath } from "../src/search/lexical/lexicon.js"
import type { LexiconLang } from "../src/search/lexical/lexicon.js"
import type { LexiconProbeAnswer, LexiconProbeJob } from "./lexicon-probe.js"
import { BUSINESS_WORDS, stats, syllableWords } from "./support.js"

const PROCESSES = 5

const ENGLISH = new Set(["delivery", "supplier", "invoice", "payment", "customer", "discount", "sample", "shipping", "warehouse", "order"])
const WORDS: ReadonlyArray<readonly [LexiconLang, string]> = [
  ...BUSINESS_WORDS.map((w) => [ENGLISH.has(w) ? "en" : "de", w] as const),
  ...["Urlaub", "Schicht", "Gefahrgut", "Zahlungsfrist", "Kündigungsfrist", "Arbeitszeit"].map((w) => ["de", w] as const),
  ...["vacation", "shift", "payment term", "hazardous goods", "notice period", "laptop"].map((w) => ["en", w] as const),
  ...syllableWords(40, 3).map((w, i) => [i % 2 === 0 ? "de" : "en", w] as const)
]

const probe = (job: LexiconProbeJob): Promise<LexiconProbeAnswer> =>
  new Promise((resolve, reject) => {
    const child = fork(new URL("./lexicon-probe.js", import.meta.url), [JSON.stringify(job)], {
      stdio: ["ignore", "inherit", "inherit", "ipc"], execArgv: ["--expose-gc"]
    })
    child.once("message", (m) => {
      const answer = m as LexiconProbeAnswer | { error: string }
      if ("error" in answer) reject(new Error(answer.error))
      else resolve(answer)
    })
    child.once("error", reject)
  })

const mb = (bytes: number): string => (bytes / 1_000_000).toFixed(1)

export const lexiconBench = async (): Promise<void> => {
  const path = lexiconFilePath()
  const stored = statSync(path).size
  const unpacked = gunzipSync(readFileSync(path)).length
  const answers: Array<LexiconProbeAnswer> = []
  for (let i = 0; i < PROCESSES; i++) answers.push(await probe({ words: WORDS, lookups: 200_000 }))
  const first = answers[0] as LexiconProbeAnswer
  const median = (f: (a: LexiconProbeAnswer) => number) => stats(answers.map(f)).median
  console.log(`\nlexicon: ${path}`)
  console.log(`file ${mb(stored)} MB on disk (gzip), ${mb(unpacked)} MB unpacked; ${first.groups} groups, ${first.terms} terms; ${first.found} of ${WORDS.length} probe words held`)
  console.log(`a fresh process, median of ${PROCESSES}: load ms | load CPU ms | RSS added MB, kept | right after the load | heap after MB | lookups/s`)
  console.log(`${" ".repeat(31)}${median((a) => a.loadMs).toFixed(0).padStart(7)} | ${median((a) => a.loadCpuMs).toFixed(0).padStart(11)} | ${mb(median((a) => a.rssSettled - a.rssBefore)).padStart(18)} | ${mb(median((a) => a.rssAfter - a.rssBefore)).padStart(20)} | ${mb(median((a) => a.heapAfter)).padStart(13)} | ${Math.round(median((a) => a.lookupsPerSecond))}`)
  console.log("RSS added, kept: once the load's scratch memory is given back; right after the load: after one collection, with the scratch still counted")
  console.log(`goals of the data: ≤ 12 MB on disk, load ≤ 300 ms, RSS added (kept) ≤ 80 MB (load average now ${(await import("node:os")).loadavg()[0]?.toFixed(1)})`)
}
