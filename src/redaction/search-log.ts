/**
 * A later search does not collect a redacted term again (gaps.md §12): before its search_log row
 * is written, every run of consecutive search terms whose salted hash is a redaction's
 * term_sha256 is logged as the marker (every run: the word count of a redacted term is not kept,
 * it would tell about the term; a search has few terms), and so are the
 * variants under such a term and every variant or variant key that is itself a redacted term.
 * The scope's hashes are held per connection under content_stamp (a redaction bumps it), so a
 * scope without redactions costs one read of the stamp.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { REDACTED_MARKER } from "../contracts/redaction.js"
import { termHash } from "./hash.js"
import { normalizeTerm } from "./match.js"

interface Held {
  readonly stamp: string
  readonly salt: string
  readonly hashes: ReadonlySet<string>
}

const held = new WeakMap<SqlClient, Held>()

/** The redactions' hashes of the scope file, read again when content_stamp moved. */
const redactedHashes = (sql: SqlClient) =>
  Effect.gen(function*() {
    const stamp = (yield* sql<{ s: string }>`SELECT seq || ':' || nonce AS s FROM content_stamp WHERE id = 1`)[0]?.s ?? ""
    const known = held.get(sql)
    if (known !== undefined && known.stamp === stamp) return known
    const rows = yield* sql<{ term_sha256: string }>`SELECT term_sha256 FROM redaction`
    const salt = rows.length === 0 ? "" : (yield* sql<{ salt: string }>`SELECT salt FROM redaction_salt WHERE singleton = 1`)[0]?.salt ?? ""
    const next: Held = { stamp, salt, hashes: new Set(rows.map((r) => r.term_sha256)) }
    held.set(sql, next)
    return next
  })

/** The indexes of the words of `words` that lie in a run whose hash is redacted. */
const redactedWords = (h: Held, words: ReadonlyArray<string>): Set<number> => {
  const out = new Set<number>()
  const folded = words.map(normalizeTerm)
  for (let i = 0; i < folded.length; i++) {
    let run = ""
    for (let j = i; j < folded.length; j++) {
      run = run === "" ? folded[j]! : `${run} ${folded[j]!}`
      if (run.length > 0 && h.hashes.has(termHash(h.salt, run))) for (let k = i; k <= j; k++) out.add(k)
    }
  }
  return out
}

/** True when any run of the words of `text` is a redacted term. */
const holdsRedacted = (h: Held, text: string): boolean => redactedWords(h, normalizeTerm(text).split(" ").filter((w) => w.length > 0)).size > 0

export interface LoggedTerms {
  readonly terms?: unknown
  readonly variants?: unknown
}

/** `entry` with its terms and variants as search_log may keep them. */
export const redactLoggedTerms = <E extends LoggedTerms>(sql: SqlClient, entry: E) =>
  Effect.gen(function*() {
    if (!Array.isArray(entry.terms) && (typeof entry.variants !== "object" || entry.variants === null)) return entry
    const h = yield* redactedHashes(sql)
    if (h.hashes.size === 0) return entry
    const terms = Array.isArray(entry.terms) ? entry.terms.map((t) => (typeof t === "string" ? t : String(t))) : null
    const hidden = terms === null ? new Set<number>() : redactedWords(h, terms)
    const hiddenTerms = new Set(terms === null ? [] : [...hidden].map((i) => terms[i]!))
    const out: Record<string, unknown> = { ...(entry as object) }
    if (terms !== null) out.terms = terms.map((t, i) => (hidden.has(i) ? REDACTED_MARKER : t))
    if (typeof entry.variants === "object" && entry.variants !== null && !Array.isArray(entry.variants)) {
      const variants: Record<string, Array<unknown>> = {}
      for (const [key, list] of Object.entries(entry.variants as Record<string, unknown>)) {
        const bare = key.startsWith("~") ? key.slice(1) : key
        const keyHidden = hiddenTerms.has(key) || holdsRedacted(h, bare)
        const values = Array.isArray(list) ? list : [list]
        const kept = values.map((v) => (keyHidden || (typeof v === "string" && holdsRedacted(h, v)) ? REDACTED_MARKER : v))
        const name = keyHidden ? (key.startsWith("~") ? `~${REDACTED_MARKER}` : REDACTED_MARKER) : key
        variants[name] = [...(variants[name] ?? []), ...kept]
      }
      out.variants = variants
    }
    return out as E
  })
