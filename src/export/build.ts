/**
 * Markdown export of one scope file (architecture.md §4.4, gaps.md §8).
 *
 * buildExport reads the whole scope inside one read transaction (one snapshot) and renders:
 *   README.md                 scope, export time in the zone, counts, index of rules by status
 *   rules/<rule-id>.md        every rule (rejected ones too): every version, every decision
 *   sources/<sha16>.md        metadata, full mail text or every segment, attachments with text
 *   graph/entities.md         the entity tree with full paths, every entity version
 *   graph/links.md            every stored link, every review
 *   manifest.json             scope, schema_version, row counts, sha256 of every other file
 *
 * Deterministic: every query has an ORDER BY, every list is built from ordered rows, and the only
 * time in the output is the export time line of README.md (which the manifest does not hash).
 * Foreign text goes through escapeForeign; every other value too, so no value can break layout.
 * Headings carry only server-made text (ids, numbers, fixed words). Columns this module does not
 * know (later migrations) are still exported, after the known ones, sorted by name.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { entitiesFile, linksFile, readmeFile, ruleFile, sourceFile, sourcePaths } from "./files.js"
import { compare, safeSegment, sha256Hex, sortKeys } from "./markdown.js"
import { groupBy, push, readSnapshot, type Snapshot, str } from "./snapshot.js"
import type { ExportFile, ExportFiles, ExportOptions } from "./types.js"

const render = (snap: Snapshot, opts: ExportOptions): ExportFiles => {
  const versionsOf = groupBy(snap.versions, "rule_id")
  const decisionsOf = groupBy(snap.decisions, "rule_id")
  const segmentsOf = groupBy(snap.segments, "source_id")
  const attachmentsOf = groupBy(snap.attachments, "source_id")
  const entityVersionsOf = groupBy(snap.entityVersions, "id")
  const sourcePath = sourcePaths(snap.sources)

  const citedBy = new Map<string, Array<string>>()
  for (const rule of snap.rules) {
    const id = str(rule, "id")
    const vs = versionsOf.get(id) ?? []
    for (const sourceId of new Set(vs.map((v) => str(v, "source_id")))) {
      push(citedBy, sourceId, id)
    }
  }

  const files: Array<ExportFile> = []
  for (const rule of snap.rules) {
    const id = str(rule, "id")
    files.push({
      path: `rules/${safeSegment(id)}.md`,
      content: ruleFile(rule, versionsOf.get(id) ?? [], decisionsOf.get(id) ?? [], sourcePath)
    })
  }
  for (const source of snap.sources) {
    const id = str(source, "id")
    const path = sourcePath.get(id) ?? `sources/${sha256Hex(id).slice(0, 16)}.md`
    const name = path.slice("sources/".length, -".md".length)
    files.push({
      path,
      content: sourceFile(source, name, segmentsOf.get(id) ?? [], attachmentsOf.get(id) ?? [], citedBy.get(id) ?? [])
    })
  }
  files.push({ path: "graph/entities.md", content: entitiesFile(snap.scope, snap.entities, entityVersionsOf) })
  files.push({ path: "graph/links.md", content: linksFile(snap.scope, snap.links, snap.reviews) })

  const hashed = [...files].sort((a, b) => compare(a.path, b.path))
  const manifest = sortKeys({
    scope: snap.scope,
    schema_version: snap.schemaVersion,
    counts: Object.fromEntries(snap.counts),
    files: Object.fromEntries(hashed.map((f) => [f.path, sha256Hex(Buffer.from(f.content, "utf8"))]))
  })
  files.push({ path: "manifest.json", content: `${JSON.stringify(manifest, null, 2)}\n` })
  files.push({ path: "README.md", content: readmeFile(snap, opts, versionsOf) })

  return { scope: snap.scope, files: files.sort((a, b) => compare(a.path, b.path)) }
}

/**
 * Reads one scope file inside one read transaction (one snapshot) and renders its export.
 * The same database state gives byte-identical files; only the README time line depends on `now`.
 */
export const buildExport: (sql: SqlClient, opts: ExportOptions) => Effect.Effect<ExportFiles, SqlError> = Effect.fn(
  "Export.build"
)(function*(sql: SqlClient, opts: ExportOptions) {
  const snap = yield* sql.withTransaction(readSnapshot(sql))
  return render(snap, opts)
})
