/** Source schemas (architecture.md §6.2, §6.2a). */
import { Schema } from "effect"
import { JamieId, MailId, ScopeName } from "../contracts/ids.js"
import { Instant, Link, RedactedFlag } from "../contracts/schemas.js"

export const AttachmentIn = Schema.Struct({
  filename: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(500)),
  media_type: Schema.String.pipe(Schema.minLength(3), Schema.maxLength(200)),
  size: Schema.NullOr(Schema.Number.pipe(Schema.int(), Schema.nonNegative())),
  external: Schema.NullOr(Schema.String.pipe(Schema.maxLength(500))),
  text: Schema.NullOr(Schema.String.pipe(Schema.maxLength(2_000_000))),
  text_origin: Schema.NullOr(Schema.Literal("ocr", "description"))
}).pipe(Schema.filter((a) =>
  (a.text === null) === (a.text_origin === null) ||
  { path: ["text_origin"], message: "text and text_origin are both null or both set" }
))
export type AttachmentIn = typeof AttachmentIn.Type

export const Segment = Schema.Struct({
  start_s: Schema.Number.pipe(Schema.int(), Schema.nonNegative()),
  speaker: Schema.NullOr(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200))),
  text: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(10_000))
})
export type Segment = typeof Segment.Type

/**
 * What the mail's transport says about its sender (slice A): the From header and the
 * Authentication-Results header as received (RFC 8601), stored in source_auth. The policy reads
 * them for external-sensitive (a sender outside the own domains, or results that do not pass).
 */
export const MailAuth = Schema.Struct({
  from: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(1000)),
  authentication_results: Schema.String.pipe(Schema.maxLength(20_000))
})
export type MailAuth = typeof MailAuth.Type

export const MailSourceIn = Schema.Struct({
  kind: Schema.Literal("mail"),
  id: MailId,
  title: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(500)),
  occurred_at: Instant,
  sender: Schema.NullOr(Schema.String.pipe(Schema.maxLength(500))),
  thread: Schema.NullOr(MailId),
  link: Schema.NullOr(Link),
  auth: Schema.optional(Schema.NullOr(MailAuth))
})
export const JamieSourceIn = Schema.Struct({
  kind: Schema.Literal("jamie"),
  id: JamieId,
  title: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(500)),
  occurred_at: Instant,
  sender: Schema.NullOr(Schema.String.pipe(Schema.maxLength(500))),
  link: Link
})

export const SourceRequest = Schema.Struct({
  scope: ScopeName,
  source: Schema.Union(MailSourceIn, JamieSourceIn),
  text: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(5_000_000))),
  segments: Schema.optional(Schema.Array(Segment).pipe(Schema.minItems(1), Schema.maxItems(20_000))),
  attachments: Schema.Array(AttachmentIn).pipe(Schema.maxItems(200))
}).pipe(Schema.filter((r) => {
  if (r.source.kind === "mail") {
    if (r.text === undefined) return { path: ["text"], message: "required for a mail source" }
    if (r.segments !== undefined) return { path: ["segments"], message: "a mail source has text, not segments" }
  } else {
    if (r.segments === undefined) return { path: ["segments"], message: "required for a jamie source" }
    if (r.text !== undefined) return { path: ["text"], message: "a jamie source has segments, not text" }
    for (let i = 1; i < r.segments.length; i++) {
      if ((r.segments[i]?.start_s ?? 0) < (r.segments[i - 1]?.start_s ?? 0)) {
        return { path: ["segments", i, "start_s"], message: "start_s must be non-decreasing" }
      }
    }
  }
  return true
}))
export type SourceRequest = typeof SourceRequest.Type

export const SourceStored = Schema.Struct({ created: Schema.Boolean, id: Schema.String })
export type SourceStored = typeof SourceStored.Type

/** GET /v1/sources/:id (§6.2a): the source id, its scope and what to include besides the metadata. */
export const ReadSourceInput = Schema.Struct({
  id: Schema.String,
  scope: ScopeName,
  include: Schema.optional(Schema.String)
})
export type ReadSourceInput = typeof ReadSourceInput.Type

export const SOURCE_INCLUDES = ["text", "attachments"] as const
export type SourceInclude = (typeof SOURCE_INCLUDES)[number]

/** `include` is a comma list of "text" | "attachments", each at most once; null when invalid. */
export const parseInclude = (include: string | undefined): ReadonlySet<SourceInclude> | null => {
  if (include === undefined) return new Set()
  const parts = include.split(",")
  const out = new Set<SourceInclude>()
  for (const p of parts) {
    if (!(SOURCE_INCLUDES as ReadonlyArray<string>).includes(p) || out.has(p as SourceInclude)) return null
    out.add(p as SourceInclude)
  }
  return out
}

export const AttachmentOut = Schema.Struct({
  ref: Schema.String,
  n: Schema.Number,
  filename: Schema.String,
  media_type: Schema.String,
  size: Schema.NullOr(Schema.Number),
  external: Schema.NullOr(Schema.String),
  text_origin: Schema.Literal("ocr", "description", "none"),
  text: Schema.optional(Schema.NullOr(Schema.String)),
  /** a redaction touched its name or text */
  redacted: RedactedFlag
})
export type AttachmentOut = typeof AttachmentOut.Type

export const SourceOut = Schema.Struct({
  id: Schema.String,
  scope: ScopeName,
  kind: Schema.Literal("mail", "jamie", "manual"),
  title: Schema.NullOr(Schema.String),
  occurred_at: Schema.NullOr(Instant),
  sender: Schema.NullOr(Schema.String),
  thread: Schema.NullOr(Schema.String),
  link: Schema.NullOr(Schema.String),
  fulltext_sha256: Schema.NullOr(Schema.String),
  fetched_at: Instant,
  text_chars: Schema.NullOr(Schema.Number),
  segment_count: Schema.NullOr(Schema.Number),
  attachments: Schema.Array(AttachmentOut),
  text: Schema.optional(Schema.String),
  segments: Schema.optional(Schema.Array(Segment)),
  /** a redaction touched its title, sender, text, a segment, an attachment or its mail header */
  redacted: RedactedFlag
})
export type SourceOut = typeof SourceOut.Type
