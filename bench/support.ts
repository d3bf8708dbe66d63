/**
 * What the benches share: the seeded random numbers (one LCG, each bench its own seed so its
 * figures stay comparable from run to run), synthetic words (syllable words, a Zipf draw), the
 * bulk seeding of confirmed rules and the order statistics of a sample.
 */
import { createServer } from "node:net"
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { formatRuleId } from "../src/contracts/ids.js"

// ---- seeded random --------------------------------------------------------------------------

export interface SeededRandom {
  /** an integer in [0, n) */
  readonly int: (n: number) => number
  /** starts again from `to` (default: the seed) */
  readonly reset: (to?: number) => void
}

/** The benches' LCG (glibc's constants, modulo 2³¹). */
export const seededRandom = (seed: number): SeededRandom => {
  let state = seed
  return {
    int: (n) => {
      state = (state * 1103515245 + 12345) % 2147483648
      return state % n
    },
    reset: (to = seed) => {
      state = to
    }
  }
}

// ---- words ----------------------------------------------------------------------------------

/** Business words of the scope files the benches build (German and English). */
export const BUSINESS_WORDS = [
  "Lieferzeit", "Hakenleiste", "Bestellung", "Lieferant", "Rechnung", "Zahlungsziel", "Skonto", "Kunde", "Angebot",
  "Muster", "Versand", "Palette", "Spedition", "Reklamation", "Gutschrift", "Preisliste", "Rabatt", "Lager",
  "delivery", "supplier", "invoice", "payment", "customer", "discount", "sample", "shipping", "warehouse", "order"
] as const

export const SYLLABLES = ["ka", "ri", "mo", "te", "lu", "ser", "an", "dor", "vi", "pel", "gu", "nes", "tra", "bo", "lin", "ex"] as const

/** The i-th synthetic word of `syllables` syllables (i's base-16 digits, lowest first). */
export const syllableWord = (i: number, syllables: number): string =>
  Array.from({ length: syllables }, (_, k) => SYLLABLES[(i >> (4 * k)) % 16]).join("")

/** n distinct synthetic words of `syllables` syllables. */
export const syllableWords = (n: number, syllables: number): Array<string> => Array.from({ length: n }, (_, i) => syllableWord(i, syllables))

/** A word drawn Zipf-like from `vocab`: rank r with weight 1/r. */
export const zipfWords = (vocab: ReadonlyArray<string>, rand: SeededRandom): (() => string) => {
  let acc = 0
  const cumulative = vocab.map((_, i) => (acc += 1 / (i + 1)))
  return () => {
    const x = (rand.int(1_000_000) / 1_000_000) * (cumulative[cumulative.length - 1] ?? 1)
    let lo = 0
    let hi = cumulative.length - 1
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if ((cumulative[mid] ?? 0) < x) lo = mid + 1
      else hi = mid
    }
    return vocab[lo] ?? "x"
  }
}

/**
 * Texts of new words: each call gives `n` words `word` draws that no call gave before and that
 * `asked` does not hold (compared case-folded), so nothing of a text's analysis was seen before
 * (the goal lines' "new words"). Draws again on a word already used; after 10,000 draws in a row
 * without a new one it throws (the vocabulary is used up).
 */
export const newWordsOf = (word: () => string, asked: Iterable<string> = []): ((n: number) => string) => {
  const used = new Set([...asked].flatMap((t) => t.toLowerCase().split(/\s+/)).filter((w) => w.length > 0))
  return (n) => {
    const out: Array<string> = []
    while (out.length < n) {
      let w = word()
      for (let tries = 0; used.has(w.toLowerCase()); tries++) {
        if (tries >= 10_000) throw new Error("newWordsOf: the vocabulary is used up")
        w = word()
      }
      used.add(w.toLowerCase())
      out.push(w)
    }
    return out.join(" ")
  }
}

/** n words of `word` joined by spaces. */
export const sentenceOf = (word: () => string) => (n: number): string => Array.from({ length: n }, word).join(" ")

// ---- seeding --------------------------------------------------------------------------------

/** The texts of one seeded rule. */
export interface SeedRule {
  readonly statement: string
  readonly keywords: ReadonlyArray<string>
  readonly relations: ReadonlyArray<{ readonly kind: string; readonly name: string; readonly ref: null }>
  readonly quote: string
  /** the relations column of rule_fts (default: the relations' kinds) */
  readonly ftsRelations?: string
}

const SEED_AT = "2026-01-01T00:00:00.000Z"

/** The manual source every seeded rule cites. */
export const seedManualSource = (sql: SqlClient) =>
  sql`INSERT INTO source (id, kind, title, occurred_at, sender, thread, link, excerpt, fulltext_sha256, fetched_at, feeder)
    VALUES ('manual:person:1', 'manual', NULL, NULL, NULL, NULL, NULL, NULL, NULL, ${SEED_AT}, 'person:1')`.raw

/**
 * Rules seq `from`…`to` in bulk as a confirmed rule is stored (version 1 proposed, version 2
 * confirmed, the rule_fts row), without the lexical index (rebuild it after) and without the
 * manual source (seedManualSource). Runs in the caller's transaction.
 */
export const seedConfirmedRules = (sql: SqlClient, from: number, to: number, rule: (seq: number) => SeedRule) =>
  Effect.gen(function*() {
    for (let seq = from; seq <= to; seq++) {
      const id = formatRuleId("bench", seq)
      const r = rule(seq)
      const keywords = JSON.stringify(r.keywords)
      const relations = JSON.stringify(r.relations)
      yield* sql`INSERT INTO rule (seq, id, created_at, created_by) VALUES (${seq}, ${id}, ${SEED_AT}, 'person:1')`.raw
      for (const [version, status] of [[1, "proposed"], [2, "confirmed"]] as const) {
        yield* sql`INSERT INTO rule_version (rule_id, version, kind, statement, source_id, quote, timestamp_s, source_link, said_at, speaker,
            relations, keywords, valid_from, valid_until, supersedes, superseded_by, status, reason, changed_by, changed_at)
          VALUES (${id}, ${version}, 'rule', ${r.statement}, 'manual:person:1', ${r.quote}, NULL, NULL, ${SEED_AT}, NULL, ${relations}, ${keywords},
            '2026-01-01', NULL, NULL, NULL, ${status}, 'bench', 'person:1', ${SEED_AT})`.raw
      }
      const ftsRelations = r.ftsRelations ?? r.relations.map((x) => x.kind).join(" ")
      yield* sql`INSERT INTO rule_fts (rowid, keywords, statement, relations, quote)
        VALUES (${seq}, ${r.keywords.join(" ")}, ${r.statement}, ${ftsRelations}, ${r.quote})`.raw
    }
  })

// ---- stats ----------------------------------------------------------------------------------

/** The q-quantile of an ascending sample (nearest rank below). */
export const percentile = (sorted: ReadonlyArray<number>, q: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0

export interface Stats {
  readonly n: number
  readonly median: number
  readonly p95: number
  readonly p99: number
  readonly max: number
}

/** Median, p95, p99 and max of a sample. */
export const stats = (xs: ReadonlyArray<number>): Stats => {
  const s = [...xs].sort((a, b) => a - b)
  return { n: s.length, median: percentile(s, 0.5), p95: percentile(s, 0.95), p99: percentile(s, 0.99), max: s[s.length - 1] ?? 0 }
}

/** How long an effect takes, in ms. */
export const timed = <A, E, R>(e: Effect.Effect<A, E, R>): Effect.Effect<number, E, R> =>
  Effect.gen(function*() {
    const t0 = performance.now()
    yield* e
    return performance.now() - t0
  })

/**
 * Whether a warm-up has settled: at least `minWindows` windows run, and the cost of the last one
 * (the server's CPU per answer) no longer below the lowest before it by more than `tolerance`:
 * the cost stopped falling. A service just started pays for its JIT and its caches in its first
 * tens of seconds under load (docs/performance.md); a bench that measures the steady
 * state waits for this, up to a limit of its own.
 */
export const settled = (costs: ReadonlyArray<number>, minWindows: number, tolerance = 0.05): boolean => {
  if (costs.length < Math.max(2, minWindows) || !costs.every((c) => Number.isFinite(c) && c > 0)) return false
  const last = costs[costs.length - 1] as number
  return last >= (1 - tolerance) * Math.min(...costs.slice(0, -1))
}

/** A goal line: "goal <what>: met|missed (<figures>)". */
export const goalLine = (what: string, met: boolean, figures: string): string => `goal ${what}: ${met ? "met" : "missed"} (${figures})`

/** A free TCP port on loopback. */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const srv = createServer()
    srv.once("error", reject)
    srv.listen(0, "127.0.0.1", () => {
      const a = srv.address()
      srv.close(() => resolve(typeof a === "object" && a !== null ? a.port : 0))
    })
  })
