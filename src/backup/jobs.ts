/**
 * The file work of backup run, probe, verify and restore: every job opens its own read-only
 * connection (architecture.md §11), does one long read and closes it. Jobs run in the backup
 * worker thread (worker.ts), so the service's event loop keeps answering while better-sqlite3
 * blocks for a VACUUM INTO, an integrity check or an export; nothing here writes a file that
 * is opened by the service.
 *
 *   snapshot  VACUUM INTO a target (an empty 0600 file made here first, so the copy is never
 *             readable by others), from the source opened read-only
 *   inspect   integrity, meta.scope, schema_version, rows of every append-only table (tables
 *             with an unconditional BEFORE DELETE … RAISE(ABORT, 'append-only') trigger, read
 *             from the file's schema), the newest change, backup_state counts (ops), sample query
 *   digest    the export of the file: sha256 of every rules/<id>.md, and the newest change per rule
 *   export-hashes  the digests of a backup and of a live snapshot compared (checks.ts), so only
 *             the verdict crosses to the main thread
 *   archive   the export of the file as .tar.gz written to a new 0600 file, with its sha256
 *   encrypt   a file age-encrypted as a stream to recipients into a new 0600 file (keyed scopes)
 *   decrypt   an age file decrypted as a stream with identities into a new 0600 file
 *   ping      the thread the jobs run on
 */
import { createHash } from "node:crypto"
import { closeSync, fsyncSync, openSync, statSync, writeSync } from "node:fs"
import { isMainThread, threadId } from "node:worker_threads"
import * as Reactivity from "@effect/experimental/Reactivity"
import type { SqlClient } from "@effect/sql/SqlClient"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Cause, Data, Effect, Option } from "effect"
import { HYGIENE_PRAGMAS } from "../db/connection.js"
import { exportArchive } from "../export/archive.js"
import { buildExport } from "../export/build.js"
import { decryptFile, encryptFile, type StreamResult } from "../keys/stream-file.js"
import { exportHashes } from "./checks.js"
import type { Check } from "./schemas.js"

export type FileKind = "scope" | "ops"

export type Job =
  | { readonly op: "ping" }
  | { readonly op: "snapshot"; readonly source: string; readonly target: string }
  | {
    readonly op: "inspect"
    readonly file: string
    readonly kind: FileKind
    /** run PRAGMA integrity_check (the whole file) */
    readonly integrity: boolean
    /** run the sample query (scope files) */
    readonly sample: boolean
    /** count these tables too where they exist (the tables of a floor: a dropped trigger hides nothing) */
    readonly tables?: ReadonlyArray<string>
  }
  | { readonly op: "digest"; readonly file: string; readonly zone: string }
  | {
    readonly op: "export-hashes"
    /** the backup file */
    readonly backup: string
    /** a snapshot of live */
    readonly live: string
    readonly zone: string
  }
  | {
    readonly op: "archive"
    readonly file: string
    readonly target: string
    readonly zone: string
    /** export time, epoch ms (README time line, archive mtime) */
    readonly now: number
  }
  | { readonly op: "encrypt"; readonly source: string; readonly target: string; readonly recipients: ReadonlyArray<string> }
  | { readonly op: "decrypt"; readonly source: string; readonly target: string; readonly identities: ReadonlyArray<string> }

export interface SampleResult {
  /** rule id of the newest rule with a search row, or null when the scope has none */
  readonly rule: string | null
  readonly found: boolean
  readonly detail: string
}

export interface FileFacts {
  readonly bytes: number
  /** "ok", or the first problems PRAGMA integrity_check reported; null when not checked */
  readonly integrity: string | null
  /** meta.schema_version, 0 without a meta table */
  readonly schemaVersion: number
  /** meta.scope of a scope file, else null */
  readonly metaScope: string | null
  /** rows per append-only table */
  readonly counts: Readonly<Record<string, number>>
  /** scope: the latest rule_version.changed_at / decision.decided_at, epoch ms; null without any */
  readonly newest: number | null
  /** the newest redaction of a scope file (redaction.at), epoch ms; null without one */
  readonly redactedAt?: number | null
  /** ops: backup_state.version_count per scope */
  readonly remembered: Readonly<Record<string, number>> | null
  /** ops: backup_state.verified_counts per scope, as stored (JSON text or null) */
  readonly verified: Readonly<Record<string, string | null>> | null
  readonly sample: SampleResult | null
}

export interface RuleDigest {
  /** sha256 hex of rules/<id>.md of the export, by rule id */
  readonly hashes: Readonly<Record<string, string>>
  /** newest changed_at / decided_at of each rule, epoch ms */
  readonly newest: Readonly<Record<string, number>>
  /** the newest of all, epoch ms; null for a scope without rules */
  readonly latest: number | null
}

export interface ArchiveResult {
  readonly bytes: number
  readonly sha256: string
}

export interface SnapshotResult {
  readonly bytes: number
}

/** ping: where the job ran (tests: the work is off the main thread). */
export interface PingResult {
  readonly threadId: number
  readonly isMainThread: boolean
}

/** export-hashes (checks.ts exportHashes) computed in the worker: only the verdict crosses threads. */
export interface ExportHashesResult {
  readonly check: Check
  readonly exceptions: ReadonlyArray<string>
}

export type JobResult<J extends Job> = J extends { op: "ping" } ? PingResult
  : J extends { op: "snapshot" } ? SnapshotResult
  : J extends { op: "inspect" } ? FileFacts
  : J extends { op: "digest" } ? RuleDigest
  : J extends { op: "archive" } ? ArchiveResult
  : J extends { op: "export-hashes" } ? ExportHashesResult
  : J extends { op: "encrypt" } ? StreamResult
  : J extends { op: "decrypt" } ? StreamResult
  : never

/** A job failed: `code` is SQLite's (SQLITE_CORRUPT, SQLITE_NOTADB, SQLITE_CANTOPEN, SQLITE_BUSY …) or ours. */
export class JobFailed extends Data.TaggedError("JobFailed")<{
  readonly code: string
  readonly message: string
}> {}

const codeOf = (e: unknown): string | null => {
  let current: unknown = e
  for (let depth = 0; depth < 4 && typeof current === "object" && current !== null; depth++) {
    const code = (current as { code?: unknown }).code
    if (typeof code === "string" && code.length > 0) return code
    current = (current as { cause?: unknown }).cause
  }
  return null
}

const messageOf = (e: unknown): string => {
  let current: unknown = e
  for (let depth = 0; depth < 4 && typeof current === "object" && current !== null; depth++) {
    const cause = (current as { cause?: unknown }).cause
    if (cause === undefined || cause === null) break
    current = cause
  }
  return current instanceof Error ? current.message : String(current)
}

/** Every failure or defect of a job as JobFailed with the SQLite code where there is one. */
const asJobFailed = <A, R>(effect: Effect.Effect<A, unknown, R>): Effect.Effect<A, JobFailed, R> =>
  effect.pipe(
    Effect.catchAllCause((cause) => {
      if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause as Cause.Cause<never>)
      const failure = Cause.failureOption(cause)
      const e: unknown = Option.isSome(failure) ? failure.value : Option.getOrUndefined(Cause.dieOption(cause))
      if (e instanceof JobFailed) return Effect.fail(e)
      return Effect.fail(new JobFailed({ code: codeOf(e) ?? "SQLITE_ERROR", message: messageOf(e).slice(0, 300) }))
    })
  )

/**
 * A read-only connection to `file` for the duration of `f`. journal_mode is left as the file
 * has it (a read-only connection cannot change it); busy_timeout and the storage hygiene
 * (secure_delete, temp_store: a VACUUM INTO sorts the copy's indexes in memory) as on every connection.
 */
export const withReadOnly = <A>(file: string, f: (sql: SqlClient) => Effect.Effect<A, unknown>): Effect.Effect<A, JobFailed> =>
  asJobFailed(Effect.scoped(Effect.gen(function*() {
    const sql = yield* SqliteClient.make({ filename: file, readonly: true, disableWAL: true }).pipe(
      Effect.provide(Reactivity.layer)
    )
    yield* sql.unsafe("PRAGMA busy_timeout = 5000").raw
    for (const pragma of HYGIENE_PRAGMAS) yield* sql.unsafe(pragma).raw
    return yield* f(sql)
  })))

const APPEND_ONLY_DELETE =
  /\bBEFORE\s+DELETE\s+ON\s+\S+\s+(?:FOR\s+EACH\s+ROW\s+)?BEGIN\s+SELECT\s+RAISE\s*\(\s*ABORT\s*,\s*'append-only'\s*\)\s*;?\s*END\s*$/i

/**
 * The append-only tables of a file: those with a BEFORE DELETE trigger that always raises
 * 'append-only' (a trigger with a WHEN clause, such as ended_session's, lets some rows go).
 */
export const appendOnlyTables = (sql: SqlClient): Effect.Effect<ReadonlyArray<string>, unknown> =>
  Effect.map(
    sql<{ tbl_name: string; sql: string | null }>`SELECT tbl_name, sql FROM sqlite_master WHERE type = 'trigger' ORDER BY tbl_name`,
    (rows) => [...new Set(rows.filter((r) => r.sql !== null && APPEND_ONLY_DELETE.test(r.sql)).map((r) => r.tbl_name))]
  )

const quoteIdent = (name: string): string => `"${name.replace(/"/g, "\"\"")}"`

const countRows = (sql: SqlClient, tables: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const counts: Record<string, number> = {}
    for (const table of tables) {
      const rows = yield* sql.unsafe<{ n: number }>(`SELECT count(*) AS n FROM ${quoteIdent(table)}`)
      counts[table] = Number(rows[0]?.n ?? 0)
    }
    return counts
  })

const tableNames = (sql: SqlClient) =>
  Effect.map(sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'table'`, (rows) => new Set(rows.map((r) => r.name)))

/** Epoch ms of an instant column, in SQL (instants differ in their fraction digits, so no string max). */
const MS = (column: string) => `CAST(round(unixepoch(${column}, 'subsec') * 1000) AS INTEGER)`

const newestChange = (sql: SqlClient, tables: ReadonlySet<string>) =>
  Effect.gen(function*() {
    let newest: number | null = null
    if (tables.has("rule_version")) {
      const rows = yield* sql.unsafe<{ ms: number | null }>(`SELECT max(${MS("changed_at")}) AS ms FROM rule_version`)
      const ms = rows[0]?.ms ?? null
      if (ms !== null) newest = Math.max(newest ?? ms, ms)
    }
    if (tables.has("decision")) {
      const rows = yield* sql.unsafe<{ ms: number | null }>(`SELECT max(${MS("decided_at")}) AS ms FROM decision`)
      const ms = rows[0]?.ms ?? null
      if (ms !== null) newest = Math.max(newest ?? ms, ms)
    }
    return newest
  })

/** A word of a statement to search for: the longest run of letters and digits (first of equals). */
export const sampleWord = (statement: string): string | null => {
  let best: string | null = null
  for (const m of statement.matchAll(/[\p{L}\p{N}]+/gu)) {
    if (best === null || m[0].length > best.length) best = m[0]
  }
  return best
}

/** The newest rule with a search row is found by a word of its statement through rule_fts. */
const sampleQuery = (sql: SqlClient, tables: ReadonlySet<string>) =>
  Effect.gen(function*() {
    if (!tables.has("rule_fts")) return { rule: null, found: false, detail: "the file has no rule_fts table" }
    const newest = yield* sql<{ seq: number; statement: string }>`SELECT rowid AS seq, statement FROM rule_fts ORDER BY rowid DESC LIMIT 1`
    const row = newest[0]
    if (row === undefined) return { rule: null, found: true, detail: "no rule with a search row" }
    const ids = yield* sql<{ id: string }>`SELECT id FROM rule WHERE seq = ${row.seq}`
    const rule = ids[0]?.id ?? `seq ${row.seq}`
    const word = sampleWord(row.statement)
    if (word === null) return { rule, found: false, detail: `${rule}: its statement has no word to search for` }
    const hits = yield* sql<{ n: number }>`SELECT count(*) AS n FROM rule_fts
      WHERE rule_fts MATCH ${`statement : "${word.replace(/"/g, "\"\"")}"`} AND rowid = ${row.seq}`
    const found = (hits[0]?.n ?? 0) > 0
    return { rule, found, detail: found ? `${rule} found by a word of its statement` : `${rule} not found by a word of its statement` }
  })

const integrityCheck = (sql: SqlClient) =>
  Effect.map(sql<{ integrity_check: string }>`PRAGMA integrity_check(20)`, (rows) =>
    rows.length === 1 && rows[0]?.integrity_check === "ok"
      ? "ok"
      : rows.map((r) => r.integrity_check).join("; ").slice(0, 300) || "no answer")

const inspect = (job: Extract<Job, { op: "inspect" }>): Effect.Effect<FileFacts, JobFailed> =>
  withReadOnly(job.file, (sql) =>
    Effect.gen(function*() {
      // the header is read by the first statement: a non-database fails here with SQLITE_NOTADB
      const tables = yield* tableNames(sql)
      const integrity = job.integrity ? yield* integrityCheck(sql) : null
      let schemaVersion = 0
      let metaScope: string | null = null
      if (tables.has("meta")) {
        const meta = yield* sql.unsafe<Record<string, unknown>>("SELECT * FROM meta LIMIT 1")
        schemaVersion = Number(meta[0]?.schema_version ?? 0)
        const scope = meta[0]?.scope
        metaScope = typeof scope === "string" ? scope : null
      }
      const counted = new Set(yield* appendOnlyTables(sql))
      for (const t of job.tables ?? []) if (tables.has(t)) counted.add(t)
      const counts = yield* countRows(sql, [...counted].sort())
      let remembered: Record<string, number> | null = null
      let verified: Record<string, string | null> | null = null
      if (job.kind === "ops" && tables.has("backup_state")) {
        const columns = yield* sql<{ name: string }>`SELECT name FROM pragma_table_info('backup_state')`
        const hasVerified = columns.some((c) => c.name === "verified_counts")
        const rows = yield* sql.unsafe<{ scope: string; version_count: number; verified_counts: string | null }>(
          `SELECT scope, version_count, ${hasVerified ? "verified_counts" : "NULL AS verified_counts"} FROM backup_state ORDER BY scope`
        )
        remembered = Object.fromEntries(rows.map((r) => [r.scope, Number(r.version_count)]))
        verified = Object.fromEntries(rows.map((r) => [r.scope, r.verified_counts]))
      }
      return {
        bytes: statSync(job.file).size,
        integrity,
        schemaVersion,
        metaScope,
        counts,
        newest: job.kind === "scope" ? yield* newestChange(sql, tables) : null,
        redactedAt: job.kind === "scope" && tables.has("redaction")
          ? Number((yield* sql.unsafe<{ ms: number | null }>(`SELECT max(${MS("at")}) AS ms FROM redaction`))[0]?.ms ?? Number.NaN) || null
          : null,
        remembered,
        verified,
        sample: job.kind === "scope" && job.sample ? yield* sampleQuery(sql, tables) : null
      }
    }))

const snapshot = (job: Extract<Job, { op: "snapshot" }>): Effect.Effect<SnapshotResult, JobFailed> =>
  Effect.gen(function*() {
    // VACUUM INTO accepts an empty file: created here 0600 and exclusively (never an existing file)
    yield* asJobFailed(Effect.try(() => closeSync(openSync(job.target, "wx", 0o600))))
    yield* withReadOnly(job.source, (sql) => sql.unsafe("VACUUM INTO ?", [job.target]).raw)
    return { bytes: statSync(job.target).size }
  })

const sha256Hex = (data: string | Uint8Array): string => createHash("sha256").update(data).digest("hex")

const digest = (job: Extract<Job, { op: "digest" }>): Effect.Effect<RuleDigest, JobFailed> =>
  withReadOnly(job.file, (sql) =>
    Effect.gen(function*() {
      const exp = yield* buildExport(sql, { zone: job.zone, now: 0 })
      const hashes: Record<string, string> = {}
      for (const file of exp.files) {
        if (file.path.startsWith("rules/") && file.path.endsWith(".md")) {
          hashes[file.path.slice("rules/".length, -".md".length)] = sha256Hex(Buffer.from(file.content, "utf8"))
        }
      }
      const rows = yield* sql.unsafe<{ rule_id: string; ms: number | null }>(
        `SELECT rule_id, max(ms) AS ms FROM (
           SELECT rule_id, ${MS("changed_at")} AS ms FROM rule_version
           UNION ALL SELECT rule_id, ${MS("decided_at")} AS ms FROM decision)
         GROUP BY rule_id`
      )
      const newest: Record<string, number> = {}
      let latest: number | null = null
      for (const r of rows) {
        if (r.ms === null) continue
        newest[r.rule_id] = Number(r.ms)
        latest = Math.max(latest ?? Number(r.ms), Number(r.ms))
      }
      return { hashes, newest, latest }
    }))

/** Both exports are built and every rules/<id>.md compared, one after the other (one export in memory at a time). */
const exportHashesJob = (job: Extract<Job, { op: "export-hashes" }>): Effect.Effect<ExportHashesResult, JobFailed> =>
  Effect.gen(function*() {
    const backup = yield* digest({ op: "digest", file: job.backup, zone: job.zone })
    const live = yield* digest({ op: "digest", file: job.live, zone: job.zone })
    return exportHashes(backup, live)
  })

const archive = (job: Extract<Job, { op: "archive" }>): Effect.Effect<ArchiveResult, JobFailed> =>
  Effect.gen(function*() {
    const data = yield* withReadOnly(job.file, (sql) =>
      Effect.map(buildExport(sql, { zone: job.zone, now: job.now }), (exp) =>
        exportArchive(exp, { mtime: Math.floor(job.now / 1000) })))
    yield* asJobFailed(Effect.try(() => {
      const fd = openSync(job.target, "wx", 0o600)
      try {
        let offset = 0
        while (offset < data.length) offset += writeSync(fd, data, offset, data.length - offset)
        fsyncSync(fd)
      } finally {
        closeSync(fd)
      }
    }))
    return { bytes: data.length, sha256: sha256Hex(data) }
  })

/** encrypt / decrypt: the library's streams; a wrong identity fails with code "age-decrypt". */
const ageJob = (j: Extract<Job, { op: "encrypt" | "decrypt" }>): Effect.Effect<StreamResult, JobFailed> =>
  Effect.tryPromise({
    try: () => (j.op === "encrypt" ? encryptFile(j.source, j.target, j.recipients) : decryptFile(j.source, j.target, j.identities)),
    catch: (e) => new JobFailed({ code: codeOf(e) ?? `age-${j.op}`, message: messageOf(e).slice(0, 300) })
  })

/** Runs one job (in the worker; tests may call it in-process). */
export const runJob = <J extends Job>(job: J): Effect.Effect<JobResult<J>, JobFailed> => {
  const j = job as Job
  switch (j.op) {
    case "ping":
      return Effect.sync(() => ({ threadId, isMainThread })) as unknown as Effect.Effect<JobResult<J>, JobFailed>
    case "snapshot":
      return snapshot(j) as Effect.Effect<JobResult<J>, JobFailed>
    case "inspect":
      return inspect(j) as Effect.Effect<JobResult<J>, JobFailed>
    case "digest":
      return digest(j) as Effect.Effect<JobResult<J>, JobFailed>
    case "archive":
      return archive(j) as Effect.Effect<JobResult<J>, JobFailed>
    case "export-hashes":
      return exportHashesJob(j) as Effect.Effect<JobResult<J>, JobFailed>
    case "encrypt":
    case "decrypt":
      return ageJob(j) as Effect.Effect<JobResult<J>, JobFailed>
  }
}
