/**
 * Provenance of a rule (architecture.md §6.5): the source, the quote, the excerpt (mail text or
 * the jamie window as "[m:ss] speaker: text" lines), the window segments, the thread and the
 * attachments with their text; status and adoption say whether a person or the approval policy
 * confirmed it (slice A).
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { attachmentRef, sourceRef } from "../contracts/ids.js"
import { reviewFacts } from "./adoption.js"
import { JAMIE_WINDOW_S } from "./quote-check.js"
import { redactedMark, redactedOf } from "./redacted.js"
import type { RuleVersionRow } from "./rules.js"
import type { AttachmentRow, SourceRow } from "./sources.js"

/** "m:ss", or "h:mm:ss" from one hour on. */
export const formatTimestamp = (s: number): string => {
  const h = Math.floor(s / 3600)
  const m = Math.floor((s % 3600) / 60)
  const sec = String(s % 60).padStart(2, "0")
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${sec}` : `${m}:${sec}`
}

export const EXCERPT_CHARS = 300

/**
 * The start of a text, at most 300 characters (code points), ending in … when shortened. Reads
 * only the first 301 code points: a bundle shows the excerpt of a mail of up to 5 MB ten times
 * per search (spreading the whole text into an array was most of a bundle's time).
 */
export const shortExcerpt = (text: string | null): string | null => {
  if (text === null || text.length <= EXCERPT_CHARS) return text
  let i = 0
  let n = 0
  let cut = 0
  while (i < text.length) {
    if (n === EXCERPT_CHARS - 1) cut = i
    i += (text.codePointAt(i) ?? 0) > 0xffff ? 2 : 1
    n++
    if (n > EXCERPT_CHARS) return `${text.slice(0, cut)}…`
  }
  return text
}

export const provenanceOf = (sql: SqlClient, v: RuleVersionRow) =>
  Effect.gen(function*() {
    const sources = yield* sql<SourceRow>`SELECT * FROM source WHERE id = ${v.source_id}`
    const src = sources[0]
    if (src === undefined) return yield* Effect.dieMessage(`rule ${v.rule_id} names a missing source`)
    let excerpt: string | null = null
    let segments: Array<{ start_s: number; speaker: string | null; text: string }> | null = null
    if (src.kind === "mail") excerpt = src.excerpt
    if (src.kind === "jamie" && v.timestamp_s !== null) {
      segments = [...yield* sql<{ start_s: number; speaker: string | null; text: string }>`
        SELECT start_s, speaker, text FROM source_segment WHERE source_id = ${src.id}
          AND start_s BETWEEN ${v.timestamp_s - JAMIE_WINDOW_S} AND ${v.timestamp_s + JAMIE_WINDOW_S} ORDER BY n`]
      excerpt = segments.map((s) => `[${formatTimestamp(s.start_s)}] ${s.speaker === null ? "" : `${s.speaker}: `}${s.text}`).join("\n")
    }
    const root = src.kind === "mail" ? (src.thread ?? src.id) : null
    const thread = root === null ? [] : yield* sql<SourceRow>`
      SELECT * FROM source WHERE kind = 'mail' AND id <> ${src.id} AND (thread = ${root} OR id = ${root})
      ORDER BY occurred_at DESC, id`
    const attachments = yield* sql<AttachmentRow>`SELECT * FROM source_attachment WHERE source_id = ${src.id} ORDER BY n`
    const { adoption } = yield* reviewFacts(sql, v.rule_id)
    const marks = yield* redactedOf(sql)
    return {
      ref: `rule/${v.rule_id}@${v.version}`,
      status: v.status,
      adoption,
      // the record: the version's quote; its source: title, sender, excerpt and segments
      ...redactedMark(marks.row("rule_version", v.rule_id, v.version)),
      source: {
        id: src.id, kind: src.kind, title: src.title, occurred_at: src.occurred_at, sender: src.sender,
        thread: src.thread, link: src.link, fulltext_sha256: src.fulltext_sha256, fetched_at: src.fetched_at,
        ...redactedMark(marks.source(src.id))
      },
      quote: v.quote,
      timestamp_s: v.timestamp_s,
      excerpt,
      segments,
      thread: thread.map((m) => ({
        ref: sourceRef(m.id), kind: "mail" as const, date: m.occurred_at ?? m.fetched_at, title: m.title ?? "",
        excerpt: shortExcerpt(m.excerpt), link: m.link, origin: "deterministic" as const, proposed: false,
        ...redactedMark(marks.source(m.id))
      })),
      attachments: attachments.map((a) => ({
        ref: attachmentRef(a.source_id, a.n), filename: a.filename, media_type: a.media_type, size: a.size,
        external: a.external, text_origin: a.text_origin, text: a.text,
        ...redactedMark(marks.row("source_attachment", a.source_id, a.n))
      }))
    }
  })
