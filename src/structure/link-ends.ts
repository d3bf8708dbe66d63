/**
 * The ends of links described for a person (graph.md §12): a rule by its statement, a mail or
 * meeting by its title, an attachment by its file name, an entity by its path; whether a
 * redaction touched what is shown, and whether a rule end is rejected. Shared by the pending
 * links and the links the policy adopted. Reads only.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { redactedOf } from "../domain/redacted.js"
import { endKindOf, entityIdOfEnd, parseAttachmentEnd, ruleIdOfEnd } from "../graph/link-types.js"
import { pathsOf } from "../graph/paths.js"
import type { PendingEnd } from "../graph/review-schemas.js"

export interface LinkEnds {
  readonly describe: (ref: string) => typeof PendingEnd.Type
  /** an end whose shown title a redaction touched: a rule's statement, a source's title, an attachment's name */
  readonly touched: (ref: string) => boolean
  /** a rule end whose current version is rejected */
  readonly rejected: (ref: string) => boolean
}

export const describeEnds = (sql: SqlClient, ends: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const of = (kind: string) => [...new Set(ends.filter((e) => endKindOf(e) === kind))]
    const ruleIds = of("rule").map(ruleIdOfEnd)
    const rules = new Map(ruleIds.length === 0 ? [] : (yield* sql<{ rule_id: string; statement: string; status: string; version: number }>`
      SELECT rule_id, statement, status, version FROM current_version WHERE rule_id IN ${sql.in(ruleIds)}`).map((r) => [`rule/${r.rule_id}`, r]))
    const sourceIds = of("source").map((e) => e.slice("source/".length))
    const sources = new Map(sourceIds.length === 0 ? [] : (yield* sql<{ id: string; title: string | null }>`
      SELECT id, title FROM source WHERE id IN ${sql.in(sourceIds)}`).map((s) => [`source/${s.id}`, s.title]))
    const attachmentSources = [...new Set(of("attachment").map((e) => parseAttachmentEnd(e).sourceId))]
    const attachments = new Map(attachmentSources.length === 0 ? [] : (yield* sql<{ source_id: string; n: number; filename: string }>`
      SELECT source_id, n, filename FROM source_attachment WHERE source_id IN ${sql.in(attachmentSources)}`)
      .map((a) => [`attachment/${a.source_id}#${a.n}`, a.filename]))
    const paths = yield* pathsOf(sql, of("entity").map(entityIdOfEnd))
    const marks = yield* redactedOf(sql)
    const touched = (ref: string): boolean => {
      switch (endKindOf(ref)) {
        case "rule":
          return marks.row("rule_version", ruleIdOfEnd(ref), rules.get(ref)?.version ?? 0)
        case "source":
          return marks.row("source", ref.slice("source/".length))
        case "attachment": {
          const a = parseAttachmentEnd(ref)
          return marks.row("source_attachment", a.sourceId, a.n)
        }
        default:
          return false
      }
    }
    const describe = (ref: string): typeof PendingEnd.Type => {
      const kind = endKindOf(ref) ?? "source"
      switch (kind) {
        case "rule":
          return { ref, kind, title: rules.get(ref)?.statement ?? null, path: null }
        case "source":
          return { ref, kind, title: sources.get(ref) ?? null, path: null }
        case "attachment":
          return { ref, kind, title: attachments.get(ref) ?? null, path: null }
        case "entity":
          return { ref, kind, title: null, path: paths.get(entityIdOfEnd(ref)) ?? [] }
      }
    }
    return { describe, touched, rejected: (ref: string) => rules.get(ref)?.status === "rejected" } satisfies LinkEnds
  })
