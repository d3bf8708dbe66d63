/**
 * The CHECK bounds a redacted text must still meet (scope migrations 0001–0004): the marker is
 * ten characters, so a text can grow past a maximum or (a quote made mostly of the term) shrink
 * below a minimum. The smallest change that keeps the row valid, the same every time for the same
 * text (a replay from the ledger gives the same bytes):
 *  - too long: cut to the maximum, the last character "…" (never inside a marker: the cut goes
 *    before it);
 *  - too short: padded with spaces at its end up to the minimum the original met.
 * Lengths in characters (code points), as SQLite's length() counts them. Pure functions.
 */
import { REDACTED_MARKER } from "../contracts/redaction.js"

interface Bounds {
  readonly min?: number
  readonly max?: number
}

/** table.column → its bounds (only columns a redaction can push out of them). */
const BOUNDS: Readonly<Record<string, Bounds>> = {
  "rule_version.statement": { min: 10, max: 500 },
  "rule_version.quote": { min: 20 },
  "entity_version.name": { max: 200 },
  "entity_version.evidence": { max: 1000 },
  "link.evidence": { max: 1000 },
  "source_auth.mail_from": { max: 1000 },
  "source_auth.authentication_results": { max: 20000 }
}

const ELLIPSIS = "…"

/** `redacted` (the original with its ranges replaced) within the bounds of table.column that `original` met. */
export const fitText = (table: string, column: string, original: string, redacted: string): string => {
  const b = BOUNDS[`${table}.${column}`]
  if (b === undefined) return redacted
  const chars = [...redacted]
  if (b.max !== undefined && chars.length > b.max) {
    let cut = b.max - 1
    // the character index where each marker starts; a cut inside one moves to its start
    const text = redacted
    let unit = 0
    const starts: Array<number> = []
    for (let k = 0; k < chars.length; k++) {
      if (text.startsWith(REDACTED_MARKER, unit)) starts.push(k)
      unit += chars[k]!.length
    }
    for (const s of starts) if (s < cut && s + REDACTED_MARKER.length > cut) cut = s
    return chars.slice(0, cut).join("") + ELLIPSIS
  }
  if (b.min !== undefined) {
    const min = Math.min(b.min, [...original].length)
    if (chars.length < min) return redacted + " ".repeat(min - chars.length)
  }
  return redacted
}
