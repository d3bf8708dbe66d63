/**
 * Sources (architecture.md §6.2, §6.2a): stored synchronously as received; never changed;
 * attachments are never added later. The writer of source, source_segment, source_attachment and
 * source_auth. Nothing is stored of a source that holds a secret (invariant 12): the secret scan
 * runs over every text first and a hit is 422 secret-detected with only secret_finding rows.
 */
import { createHash } from "node:crypto"
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { ScopeStore } from "../db/scope-store.js"
import { canonicalJson } from "./canonical-json.js"
import { NotFound, SourceConflict } from "../contracts/errors.js"
import { attachmentRef, manualSourceId } from "../contracts/ids.js"
import type { Channel } from "../contracts/schemas.js"
import type { SecretField } from "../security/secrets.js"
import { refuseSecrets } from "./secret-findings.js"
import { redactedMark, redactedOf } from "./redacted.js"
import type { AttachmentOut, MailAuth, SourceInclude, SourceOut, SourceRequest, SourceStored } from "./source-schemas.js"
import { nowInstant } from "../contracts/time.js"

/**
 * One generic message whatever the reason (architecture.md §6.2); the reason goes to the log. A
 * grant's own source also gets the differing fields as issues (paths only: it can read the source
 * back itself); another grant's is told nothing about the stored source.
 */
export const SOURCE_CONFLICT_MESSAGE = "a source with this id is already stored in this scope and differs from this request"
const DIFFERS = "differs from the stored source with this id"
const CONFLICT_REMEDY = "send the source as stored (GET /v1/sources/:id?include=text,attachments shows it) or store it under a new id"

export const sha256Hex = (text: string): string => createHash("sha256").update(text, "utf8").digest("hex")

/** SHA-256 of the mail text, or of the canonical JSON of the segments (docs/decisions.md, §6 HTTP API). */
export const fulltextSha256 = (req: SourceRequest): string =>
  req.source.kind === "mail"
    ? sha256Hex(req.text ?? "")
    : sha256Hex(canonicalJson((req.segments ?? []).map((s) => ({ start_s: s.start_s, speaker: s.speaker, text: s.text }))))

export interface SourceRow {
  id: string
  kind: "mail" | "jamie" | "manual"
  title: string | null
  occurred_at: string | null
  sender: string | null
  thread: string | null
  link: string | null
  excerpt: string | null
  fulltext_sha256: string | null
  fetched_at: string
  feeder: string
}

export interface AttachmentRow {
  source_id: string
  n: number
  filename: string
  media_type: string
  size: number | null
  external: string | null
  text: string | null
  text_origin: "ocr" | "description" | "none"
}

const ATTACHMENT_FIELDS = ["filename", "media_type", "size", "external", "text", "text_origin"] as const

/** The attachment fields of the request that differ from the stored ones: `attachments` when the lists differ in length. */
const attachmentDifferences = (stored: ReadonlyArray<AttachmentRow>, req: SourceRequest): Array<string> => {
  if (stored.length !== req.attachments.length) return ["attachments"]
  return req.attachments.flatMap((a, i) => {
    const s = stored[i]
    if (s === undefined) return [`attachments[${i}]`]
    const sent = { ...a, text_origin: a.text_origin ?? "none" }
    return ATTACHMENT_FIELDS.filter((f) => s[f] !== sent[f]).map((f) => `attachments[${i}].${f}`)
  })
}

type ConflictReason = "other-feeder" | "source-differs" | "attachments-differ"

/** The auth of a mail request (absent and null alike: none). */
const authOf = (req: SourceRequest): MailAuth | null => (req.source.kind === "mail" ? req.source.auth ?? null : null)

const sameAuth = (stored: { readonly mail_from: string; readonly authentication_results: string } | undefined, auth: MailAuth | null): boolean =>
  stored === undefined ? auth === null : auth !== null && stored.mail_from === auth.from && stored.authentication_results === auth.authentication_results

/** Why a request under a stored id is refused, and which of its fields differ (named by their request path, never their values). */
interface Conflict {
  readonly reason: ConflictReason
  /** empty for another feeder's source: nothing about it is told */
  readonly fields: ReadonlyArray<string>
}

const conflictOf = (
  row: SourceRow,
  attachments: ReadonlyArray<AttachmentRow>,
  storedAuth: { readonly mail_from: string; readonly authentication_results: string } | undefined,
  req: SourceRequest,
  grantId: string,
  hash: string
): Conflict | null => {
  if (row.feeder !== grantId) return { reason: "other-feeder", fields: [] }
  const src = req.source
  const thread = src.kind === "mail" ? src.thread : null
  const fields = [
    ...(row.kind !== src.kind ? ["source.kind"] : []),
    ...(row.title !== src.title ? ["source.title"] : []),
    ...(row.occurred_at !== src.occurred_at ? ["source.occurred_at"] : []),
    ...(row.sender !== src.sender ? ["source.sender"] : []),
    ...(row.thread !== thread ? ["source.thread"] : []),
    ...(row.link !== src.link ? ["source.link"] : []),
    ...(row.fulltext_sha256 !== hash ? [src.kind === "mail" ? "text" : "segments"] : []),
    ...(!sameAuth(storedAuth, authOf(req)) ? ["source.auth"] : [])
  ]
  if (fields.length > 0) return { reason: "source-differs", fields }
  const differ = attachmentDifferences(attachments, req)
  return differ.length > 0 ? { reason: "attachments-differ", fields: differ } : null
}

const attachmentsOf = (sql: SqlClient, sourceId: string) =>
  sql<AttachmentRow>`SELECT * FROM source_attachment WHERE source_id = ${sourceId} ORDER BY n`

/** Every text of a source request that would be stored, by the name a refusal gives it. */
export const sourceTexts = (req: SourceRequest): Array<SecretField> => {
  const src = req.source
  const auth = authOf(req)
  return [
    { field: "source.title", text: src.title },
    ...(src.sender === null ? [] : [{ field: "source.sender", text: src.sender }]),
    ...(src.link === null ? [] : [{ field: "source.link", text: src.link }]),
    ...(auth === null ? [] : [{ field: "source.auth.from", text: auth.from }, { field: "source.auth.authentication_results", text: auth.authentication_results }]),
    ...(req.text === undefined ? [] : [{ field: "text", text: req.text }]),
    ...(req.segments ?? []).flatMap((g, i) => [
      { field: `segments[${i}].text`, text: g.text },
      ...(g.speaker === null ? [] : [{ field: `segments[${i}].speaker`, text: g.speaker }])
    ]),
    ...req.attachments.flatMap((a, i) => [
      { field: `attachments[${i}].filename`, text: a.filename },
      ...(a.external === null ? [] : [{ field: `attachments[${i}].external`, text: a.external }]),
      ...(a.text === null ? [] : [{ field: `attachments[${i}].text`, text: a.text }])
    ])
  ]
}

/** Who stores a source: the grant, its channel and the id of the request's search_log row. */
export interface Feeder {
  readonly channel: Channel
  readonly requestId: string | null
}

/**
 * Stores a mail or jamie source. First the secret scan (secret-detected, only secret_finding rows
 * written). The same id again from the same grant and identical (fields, full-text hash, auth,
 * attachments) → created: false and nothing written; anything else under that id →
 * source-conflict with one generic message (the reason only in the process log; the differing
 * fields as issues when the grant stored the source itself).
 */
export const storeSource = Effect.fn("Sources.store")(function*(
  req: SourceRequest,
  grantId: string,
  feeder: Feeder = { channel: "api", requestId: null }
) {
  yield* refuseSecrets(req.scope, sourceTexts(req), { grantId, channel: feeder.channel, requestId: feeder.requestId, operation: "store_source" })
  const store = yield* ScopeStore
  const hash = fulltextSha256(req)
  const now = yield* nowInstant
  return yield* store.write(req.scope, ({ sql }) =>
    Effect.gen(function*() {
      const src = req.source
      const existing = yield* sql<SourceRow>`SELECT * FROM source WHERE id = ${src.id}`
      const row = existing[0]
      if (row !== undefined) {
        const storedAuth = (yield* sql<{ mail_from: string; authentication_results: string }>`
          SELECT mail_from, authentication_results FROM source_auth WHERE source_id = ${src.id}`)[0]
        const conflict = conflictOf(row, yield* attachmentsOf(sql, src.id), storedAuth, req, grantId, hash)
        if (conflict !== null) {
          yield* Effect.logWarning("source-conflict").pipe(
            Effect.annotateLogs({ scope: req.scope, grant: grantId, reason: conflict.reason })
          )
          return yield* new SourceConflict(
            conflict.fields.length === 0
              ? { message: SOURCE_CONFLICT_MESSAGE }
              : { message: SOURCE_CONFLICT_MESSAGE, issues: conflict.fields.map((path) => ({ path, message: DIFFERS })), remedy: CONFLICT_REMEDY }
          )
        }
        return { created: false, id: src.id } satisfies SourceStored
      }
      const thread = src.kind === "mail" ? src.thread : null
      const excerpt = src.kind === "mail" ? (req.text ?? "") : null
      yield* sql`INSERT INTO source (id, kind, title, occurred_at, sender, thread, link, excerpt, fulltext_sha256, fetched_at, feeder)
        VALUES (${src.id}, ${src.kind}, ${src.title}, ${src.occurred_at}, ${src.sender}, ${thread}, ${src.link},
                ${excerpt}, ${hash}, ${now}, ${grantId})`.raw
      for (const [i, s] of (req.segments ?? []).entries()) {
        yield* sql`INSERT INTO source_segment (source_id, n, start_s, speaker, text)
          VALUES (${src.id}, ${i + 1}, ${s.start_s}, ${s.speaker}, ${s.text})`.raw
      }
      for (const [i, a] of req.attachments.entries()) {
        yield* sql`INSERT INTO source_attachment (source_id, n, filename, media_type, size, external, text, text_origin)
          VALUES (${src.id}, ${i + 1}, ${a.filename}, ${a.media_type}, ${a.size}, ${a.external}, ${a.text},
                  ${a.text_origin ?? "none"})`.raw
      }
      const auth = authOf(req)
      if (auth !== null) {
        yield* sql`INSERT INTO source_auth (source_id, mail_from, authentication_results)
          VALUES (${src.id}, ${auth.from}, ${auth.authentication_results})`.raw
      }
      return { created: true, id: src.id } satisfies SourceStored
    })
  )
})

/** The manual source of a grant (one row per grant, created on first use). Inside a write. */
export const ensureManualSource = (sql: SqlClient, grantId: string, now: string) =>
  Effect.gen(function*() {
    const id = manualSourceId(grantId)
    const rows = yield* sql<{ id: string }>`SELECT id FROM source WHERE id = ${id}`
    if (rows.length === 0) {
      yield* sql`INSERT INTO source (id, kind, title, occurred_at, sender, thread, link, excerpt, fulltext_sha256, fetched_at, feeder)
        VALUES (${id}, 'manual', NULL, NULL, NULL, NULL, NULL, NULL, NULL, ${now}, ${grantId})`.raw
    }
    return id
  })

/** The identical answer for every "not yours" (unknown, other feeder, other scope). */
const SOURCE_NOT_FOUND = "no such source"

/**
 * The feeder's read-back of its own write (§6.2a): metadata, hash and the attachment list;
 * content only on request. Unknown, foreign and other-scope ids all answer the same 404.
 */
export const readSource = Effect.fn("Sources.read")(function*(
  scope: string,
  id: string,
  grantId: string,
  include: ReadonlySet<SourceInclude>
) {
  const store = yield* ScopeStore
  return yield* store.read(scope, ({ sql }) =>
    Effect.gen(function*() {
      const rows = yield* sql<SourceRow & { text_chars: number | null; segment_count: number | null }>`
        SELECT s.*, CASE WHEN s.kind = 'mail' THEN length(s.excerpt) END AS text_chars,
          CASE WHEN s.kind = 'jamie' THEN (SELECT count(*) FROM source_segment g WHERE g.source_id = s.id) END AS segment_count
        FROM source s WHERE s.id = ${id} AND s.feeder = ${grantId}`
      const row = rows[0]
      if (row === undefined) return yield* new NotFound({ message: SOURCE_NOT_FOUND })
      const attachments = yield* attachmentsOf(sql, id)
      const marks = yield* redactedOf(sql)
      const withText = include.has("attachments")
      const out: { -readonly [K in keyof SourceOut]: SourceOut[K] } = {
        id: row.id,
        scope,
        kind: row.kind,
        title: row.title,
        occurred_at: row.occurred_at,
        sender: row.sender,
        thread: row.thread,
        link: row.link,
        fulltext_sha256: row.fulltext_sha256,
        fetched_at: row.fetched_at,
        text_chars: row.text_chars,
        segment_count: row.segment_count,
        attachments: attachments.map((a): AttachmentOut => ({
          ref: attachmentRef(a.source_id, a.n),
          n: a.n,
          filename: a.filename,
          media_type: a.media_type,
          size: a.size,
          external: a.external,
          text_origin: a.text_origin,
          ...(withText ? { text: a.text } : {}),
          ...redactedMark(marks.row("source_attachment", a.source_id, a.n))
        })),
        ...redactedMark(marks.source(id))
      }
      if (include.has("text")) {
        if (row.kind === "mail" && row.excerpt !== null) out.text = row.excerpt
        if (row.kind === "jamie") {
          out.segments = yield* sql<{ start_s: number; speaker: string | null; text: string }>`
            SELECT start_s, speaker, text FROM source_segment WHERE source_id = ${id} ORDER BY n`
        }
      }
      return out as SourceOut
    })
  )
})
