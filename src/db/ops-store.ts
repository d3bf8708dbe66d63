/**
 * OpsStore: ops.sqlite (architecture.md §4.2) — grants, backup_state, backup runs and the
 * approval sessions ended by logout, the redaction ledger. The only writer of the file. Grants are never updated
 * except to disable them (trigger grant-disable-only).
 */
import { createHash, randomBytes } from "node:crypto"
import { existsSync } from "node:fs"
import { join } from "node:path"
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option } from "effect"
import { AppConfig } from "../config/config.js"
import { GrantExists, NotFound, ValidationFailed } from "../contracts/errors.js"
import {
  type Grant,
  type GrantAuth,
  type GrantCreate,
  type GrantKind,
  type GrantOut,
  PERSON_ONLY_RIGHTS,
  type Right,
  RIGHTS_ORDER
} from "../contracts/grants.js"
import type { RedactionPlace } from "../contracts/redaction.js"
import { nowInstant } from "../contracts/time.js"
import { openConnection, writeTransaction } from "./connection.js"
import { StoreOpenError } from "./errors.js"
import { createPrivateFile, ensurePrivateDir } from "./files.js"
import { migrate } from "./migrate.js"
import { OPS_MIGRATIONS } from "./migrations/ops/index.js"

export const OPS_FILE = "ops.sqlite"

/** "gn_" + 43 base64url characters from a CSPRNG (32 bytes). */
export const newBearerToken = (): string => `gn_${randomBytes(32).toString("base64url")}`
export const BEARER_RE = /^gn_[A-Za-z0-9_-]{43}$/
/** Bearer tokens are stored only as the SHA-256 hex of the whole token string. */
export const hashBearer = (token: string): string => createHash("sha256").update(token, "utf8").digest("hex")
export const fingerprintOf = (hash: string): string => `sha256:${hash.slice(0, 12)}`

const PRINTABLE_ASCII = /^[\x21-\x7e]+$/
const EMAIL_RE = /^[^@\s]+@[^@\s]+$/

interface GrantRow {
  seq: number
  id: string
  kind: GrantKind
  auth: GrantAuth
  identity: string
  scopes: string
  rights: string
  label: string | null
  active: number
  created_at: string
  disabled_at: string | null
}

const toGrantOut = (row: GrantRow): GrantOut => ({
  id: row.id,
  kind: row.kind,
  auth: row.auth,
  identity: row.auth === "bearer" ? null : row.identity,
  fingerprint: row.auth === "bearer" ? fingerprintOf(row.identity) : null,
  scopes: JSON.parse(row.scopes) as Array<string>,
  rights: JSON.parse(row.rights) as Array<Right>,
  label: row.label,
  active: row.active === 1,
  created_at: row.created_at,
  disabled_at: row.disabled_at
})

const toGrant = (row: GrantRow): Grant => ({
  id: row.id,
  kind: row.kind,
  auth: row.auth,
  identity: row.identity,
  scopes: JSON.parse(row.scopes) as Array<string>,
  rights: JSON.parse(row.rights) as Array<Right>
})

/** A row of key_recipient (ops migration 0006): scope null is the instance (ops.sqlite copies). */
export interface KeyRecipientOut {
  readonly seq: number
  readonly scope: string | null
  readonly recipient: string
  readonly origin: "created" | "added"
  readonly label: string | null
  readonly added_at: string
  readonly retired_at: string | null
}

export interface KeyRecipientAdd {
  readonly scope: string | null
  readonly recipient: string
  readonly origin: "created" | "added"
  readonly label?: string | undefined
}

export interface BackupStateRow {
  readonly scope: string
  readonly created_at: string
  readonly version_count: number
  readonly counted_at: string
}

/** Every column of a backup_state row (0001–0003), as stored (0/1 integers, JSON text). */
export interface BackupStateFullRow extends BackupStateRow {
  readonly verified_at: string | null
  readonly verify_ok: number | null
  readonly verify_result: string | null
  readonly verified_counts: string | null
  readonly last_backup_at: string | null
  readonly probed_at: string | null
  readonly probe_ok: number | null
  readonly probe_result: string | null
  readonly exported_at: string | null
  readonly export_sha256: string | null
}

/** A backup_run row without its result (BackupRunOut of architecture.md §11). */
export interface BackupRunSummary {
  readonly seq: number
  readonly kind: "run" | "probe"
  readonly started_at: string
  readonly finished_at: string
  readonly ok: boolean
}

/** What GET /ops/status reads from backup_run (architecture.md §4.2, §11). */
export interface BackupRunStatus {
  /** finished_at of the newest kind = 'run' row whose result.ops.ok is true */
  readonly ops_backup_at: string | null
  readonly last_run: BackupRunSummary | null
  readonly last_probe: BackupRunSummary | null
}

/** A backup_run row to write (architecture.md §4.2); `result` is the route's answer (no content). */
export interface BackupRunRecord {
  readonly kind: "run" | "probe"
  readonly backup_kind: "copy" | "litestream"
  readonly started_at: string
  readonly finished_at: string
  readonly ok: boolean
  readonly result: unknown
}

/** A probe's report of one scope; verified_counts (table → rows) is written only when ok. */
export type ProbeRecord =
  | {
    readonly ok: true
    readonly at: string
    readonly result: unknown
    readonly verified_counts: Readonly<Record<string, number>>
    readonly export: { readonly at: string; readonly sha256: string } | null
  }
  | { readonly ok: false; readonly at: string; readonly result: unknown }

/** A verify report of one scope; verified_counts is written only when ok. */
export type VerifyRecord =
  | { readonly ok: true; readonly at: string; readonly result: unknown; readonly verified_counts: Readonly<Record<string, number>> }
  | { readonly ok: false; readonly at: string; readonly result: unknown }

interface BackupRunRow {
  seq: number
  kind: "run" | "probe"
  started_at: string
  finished_at: string
  ok: number
}

const toRunSummary = (row: BackupRunRow | undefined): BackupRunSummary | null =>
  row === undefined
    ? null
    : { seq: row.seq, kind: row.kind, started_at: row.started_at, finished_at: row.finished_at, ok: row.ok === 1 }

/** One redaction of a scope file as the ledger keeps it (ops migration 0008): no text, only where. */
export interface LedgerRedaction {
  readonly scope: string
  readonly seq: number
  readonly id: string
  readonly term_sha256: string
  readonly places: number
  readonly requested_by: string
  readonly decided_by: string
  readonly reason: string
  readonly at: string
  readonly place_list: ReadonlyArray<RedactionPlace>
}

interface LedgerRow {
  scope: string
  redaction_seq: number
  redaction_id: string
  term_sha256: string
  places: number
  requested_by: string
  decided_by: string
  reason: string
  at: string
  place_list: string
}

const toLedgerRedaction = (row: LedgerRow): LedgerRedaction => ({
  scope: row.scope,
  seq: row.redaction_seq,
  id: row.redaction_id,
  term_sha256: row.term_sha256,
  places: row.places,
  requested_by: row.requested_by,
  decided_by: row.decided_by,
  reason: row.reason,
  at: row.at,
  place_list: JSON.parse(row.place_list) as ReadonlyArray<RedactionPlace>
})

/**
 * The ledger's redactions of a scope, by seq, on any connection to an ops file (restore reads the
 * live ops.sqlite read only); none when the file predates the ledger.
 */
export const listLedgerOn = (sql: SqlClient, scope: string): Effect.Effect<ReadonlyArray<LedgerRedaction>, SqlError> =>
  Effect.gen(function*() {
    const table = yield* sql<{ n: number }>`SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'redaction_ledger'`
    if ((table[0]?.n ?? 0) === 0) return []
    const rows = yield* sql<LedgerRow>`SELECT scope, redaction_seq, redaction_id, term_sha256, places, requested_by, decided_by,
      reason, at, place_list FROM redaction_ledger WHERE scope = ${scope} ORDER BY redaction_seq`
    return rows.map(toLedgerRedaction)
  })

const invalid = (path: string, message: string) =>
  new ValidationFailed({ message: `grant is invalid: ${path}: ${message}`, issues: [{ path, message }] })

export class OpsStore extends Effect.Service<OpsStore>()("Groundnote/OpsStore", {
  scoped: Effect.gen(function*() {
    const config = yield* AppConfig
    const dataDir = config.env.dataDir
    const file = join(dataDir, OPS_FILE)
    const configured = new Set(config.file.scopes.map((s) => s.name))
    ensurePrivateDir(dataDir)
    if (!existsSync(file)) createPrivateFile(file)
    const sql = yield* openConnection(file)
    const check = yield* sql<{ quick_check: string }>`PRAGMA quick_check`.pipe(
      Effect.mapError((e) => new StoreOpenError({ file, reason: `quick_check failed: ${String(e.cause)}` }))
    )
    if (check[0]?.quick_check !== "ok") {
      return yield* new StoreOpenError({ file, reason: `quick_check: ${check.map((r) => r.quick_check).join("; ")}` })
    }
    yield* migrate(sql, file, OPS_MIGRATIONS, { scope: null, now: yield* nowInstant })
    /** a transaction that writes: the CLI and the server write this file from two processes */
    const tx = writeTransaction(sql)

    const grantRows = (where: "all" | "id", id?: string) =>
      where === "all"
        ? sql<GrantRow>`SELECT * FROM grant ORDER BY seq`
        : sql<GrantRow>`SELECT * FROM grant WHERE id = ${id ?? ""}`

    const validate = (input: GrantCreate): Effect.Effect<{ identity: string | null; scopes: Array<string>; rights: Array<Right> }, ValidationFailed> =>
      Effect.gen(function*() {
        if ((input.kind === "person") !== (input.auth === "email")) {
          return yield* invalid("auth", "a person grant uses auth email; a service grant uses access-service or bearer")
        }
        let identity: string | null = null
        if (input.auth === "bearer") {
          if (input.identity !== undefined) return yield* invalid("identity", "a bearer grant takes no identity; its token is generated")
        } else {
          if (input.identity === undefined) return yield* invalid("identity", "required for auth email and access-service")
          if (!PRINTABLE_ASCII.test(input.identity)) return yield* invalid("identity", "printable ASCII only")
          if (input.auth === "email") {
            if (!EMAIL_RE.test(input.identity)) return yield* invalid("identity", "must be an e-mail address")
            identity = input.identity.toLowerCase()
          } else identity = input.identity
        }
        for (const [i, scope] of input.scopes.entries()) {
          if (!configured.has(scope)) return yield* invalid(`scopes[${i}]`, `"${scope}" is not a configured scope`)
        }
        const rights = RIGHTS_ORDER.filter((r) => input.rights.includes(r))
        const personOnly = PERSON_ONLY_RIGHTS.filter((r) => rights.includes(r))
        if (input.kind === "service" && personOnly.length > 0) {
          return yield* invalid("rights", `only a person can hold ${personOnly.join(" and ")}`)
        }
        return { identity, scopes: [...new Set(input.scopes)].sort(), rights }
      })

    const insertGrant = (g: {
      kind: GrantKind; auth: GrantAuth; identity: string; scopes: ReadonlyArray<string>; rights: ReadonlyArray<Right>
      label: string | null; now: string
    }) =>
      Effect.gen(function*() {
        const active = yield* sql<{ id: string }>`SELECT id FROM grant WHERE auth = ${g.auth} AND identity = ${g.identity} AND active = 1`
        if (active.length > 0) {
          return yield* new GrantExists({ message: `an active grant for this identity exists already (${active[0]?.id}); disable it first` })
        }
        const next = yield* sql<{ seq: number }>`SELECT coalesce(max(seq), 0) + 1 AS seq FROM grant`
        const seq = next[0]?.seq ?? 1
        const id = `${g.kind}:${seq}`
        yield* sql`INSERT INTO grant (seq, id, kind, auth, identity, scopes, rights, label, active, created_at, disabled_at)
          VALUES (${seq}, ${id}, ${g.kind}, ${g.auth}, ${g.identity}, ${JSON.stringify(g.scopes)}, ${JSON.stringify(g.rights)},
                  ${g.label}, 1, ${g.now}, NULL)`.raw
        const rows = yield* grantRows("id", id)
        return rows[0] as GrantRow
      })

    /** Creates a grant; a bearer grant's token is returned here and never again. */
    const createGrant = Effect.fn("OpsStore.createGrant")(function*(input: GrantCreate) {
      const v = yield* validate(input)
      const token = input.auth === "bearer" ? newBearerToken() : null
      const now = yield* nowInstant
      const row = yield* tx(insertGrant({
        kind: input.kind,
        auth: input.auth,
        identity: token !== null ? hashBearer(token) : (v.identity as string),
        scopes: v.scopes,
        rights: v.rights,
        label: input.label ?? null,
        now
      }))
      const out = toGrantOut(row)
      return token === null ? out : { ...out, token }
    })

    const listGrants = Effect.fn("OpsStore.listGrants")(function*() {
      const rows = yield* grantRows("all")
      return rows.map(toGrantOut)
    })

    const disableGrant = Effect.fn("OpsStore.disableGrant")(function*(id: string) {
      const now = yield* nowInstant
      return yield* tx(Effect.gen(function*() {
        const rows = yield* grantRows("id", id)
        const row = rows[0]
        if (row === undefined) return yield* new NotFound({ message: `no grant ${id}` })
        if (row.active === 1) yield* sql`UPDATE grant SET active = 0, disabled_at = ${now} WHERE id = ${id}`.raw
        const after = yield* grantRows("id", id)
        return toGrantOut(after[0] as GrantRow)
      }))
    })

    /** The grant row is immutable: disable it and insert a copy with the new label (gaps.md §3). */
    const renameGrant = Effect.fn("OpsStore.renameGrant")(function*(id: string, label: string) {
      if (label.length < 1 || label.length > 200) return yield* invalid("label", "1 to 200 characters")
      const now = yield* nowInstant
      return yield* tx(Effect.gen(function*() {
        const rows = yield* grantRows("id", id)
        const row = rows[0]
        if (row === undefined || row.active !== 1) return yield* new NotFound({ message: `no active grant ${id}` })
        yield* sql`UPDATE grant SET active = 0, disabled_at = ${now} WHERE id = ${id}`.raw
        const copy = yield* insertGrant({
          kind: row.kind, auth: row.auth, identity: row.identity,
          scopes: JSON.parse(row.scopes) as Array<string>, rights: JSON.parse(row.rights) as Array<Right>,
          label, now
        })
        return toGrantOut(copy)
      }))
    })

    /** The active grant of an identity (auth email: lowercased e-mail; bearer: hash of the token). */
    const findActiveGrant = Effect.fn("OpsStore.findActiveGrant")(function*(auth: GrantAuth, identity: string) {
      const rows = yield* sql<GrantRow>`SELECT * FROM grant WHERE auth = ${auth} AND identity = ${identity} AND active = 1`
      const row = rows[0]
      return row === undefined ? Option.none<Grant>() : Option.some(toGrant(row))
    })

    const getBackupState = (scope: string): Effect.Effect<Option.Option<BackupStateRow>, SqlError> =>
      sql<BackupStateRow>`SELECT scope, created_at, version_count, counted_at FROM backup_state WHERE scope = ${scope}`.pipe(
        Effect.map((rows) => Option.fromNullable(rows[0]))
      )

    const ensureBackupState = (scope: string): Effect.Effect<void, SqlError> =>
      Effect.flatMap(nowInstant, (now) =>
        sql`INSERT INTO backup_state (scope, created_at, version_count, counted_at) VALUES (${scope}, ${now}, 0, ${now})
            ON CONFLICT (scope) DO NOTHING`.raw
      )

    /** Raises version_count to `count` (never lowers it; the trigger refuses a decrease). */
    const raiseVersionCount = (scope: string, count: number): Effect.Effect<void, SqlError> =>
      Effect.flatMap(nowInstant, (now) =>
        sql`INSERT INTO backup_state (scope, created_at, version_count, counted_at) VALUES (${scope}, ${now}, ${count}, ${now})
            ON CONFLICT (scope) DO UPDATE SET version_count = max(version_count, excluded.version_count),
            counted_at = excluded.counted_at`.raw
      )

    /** Read only: every backup_state row with all its columns, by scope. */
    const listBackupStates = (): Effect.Effect<ReadonlyArray<BackupStateFullRow>, SqlError> =>
      sql<BackupStateFullRow>`SELECT scope, created_at, version_count, counted_at, verified_at, verify_ok, verify_result,
        verified_counts, last_backup_at, probed_at, probe_ok, probe_result, exported_at, export_sha256
        FROM backup_state ORDER BY scope`

    /** Read only: the newest run, the newest probe and the time of the last good ops.sqlite copy. */
    const backupRunStatus = (): Effect.Effect<BackupRunStatus, SqlError> =>
      Effect.gen(function*() {
        const newest = (kind: "run" | "probe") =>
          sql<BackupRunRow>`SELECT seq, kind, started_at, finished_at, ok FROM backup_run WHERE kind = ${kind}
            ORDER BY seq DESC LIMIT 1`
        const run = yield* newest("run")
        const probe = yield* newest("probe")
        const opsCopy = yield* sql<{ finished_at: string }>`SELECT finished_at FROM backup_run
          WHERE kind = 'run' AND json_type(result, '$.ops.ok') = 'true' ORDER BY seq DESC LIMIT 1`
        return {
          ops_backup_at: opsCopy[0]?.finished_at ?? null,
          last_run: toRunSummary(run[0]),
          last_probe: toRunSummary(probe[0])
        }
      })

    /** Read only: every column of one backup_state row. */
    const getBackupStateFull = (scope: string): Effect.Effect<Option.Option<BackupStateFullRow>, SqlError> =>
      sql<BackupStateFullRow>`SELECT scope, created_at, version_count, counted_at, verified_at, verify_ok, verify_result,
        verified_counts, last_backup_at, probed_at, probe_ok, probe_result, exported_at, export_sha256
        FROM backup_state WHERE scope = ${scope}`.pipe(Effect.map((rows) => Option.fromNullable(rows[0])))

    /** One backup_run row (architecture.md §4.2): the answer of a backup run or probe. Returns its seq. */
    const recordBackupRun = (run: BackupRunRecord): Effect.Effect<number, SqlError> =>
      tx(Effect.gen(function*() {
        const next = yield* sql<{ seq: number }>`SELECT coalesce(max(seq), 0) + 1 AS seq FROM backup_run`
        const seq = next[0]?.seq ?? 1
        yield* sql`INSERT INTO backup_run (seq, kind, backup_kind, started_at, finished_at, ok, result)
          VALUES (${seq}, ${run.kind}, ${run.backup_kind}, ${run.started_at}, ${run.finished_at}, ${run.ok ? 1 : 0},
                  ${JSON.stringify(run.result)})`.raw
        return seq
      }))

    /** backup_state.last_backup_at of a scope after its copy was renamed into place (§11.1 step 5). */
    const setLastBackupAt = (scope: string, at: string): Effect.Effect<void, SqlError> =>
      sql`UPDATE backup_state SET last_backup_at = ${at} WHERE scope = ${scope}`.raw

    /**
     * The probe's report of a scope (§11.2 step 5): probed_at, probe_ok, probe_result; on success
     * also verified_counts (the floor) and, when an archive was written, exported_at and export_sha256.
     */
    const recordProbe = (scope: string, probe: ProbeRecord): Effect.Effect<void, SqlError> =>
      probe.ok
        ? sql`UPDATE backup_state SET probed_at = ${probe.at}, probe_ok = 1, probe_result = ${JSON.stringify(probe.result)},
            verified_counts = ${JSON.stringify(probe.verified_counts)},
            exported_at = coalesce(${probe.export?.at ?? null}, exported_at),
            export_sha256 = coalesce(${probe.export?.sha256 ?? null}, export_sha256)
            WHERE scope = ${scope}`.raw
        : sql`UPDATE backup_state SET probed_at = ${probe.at}, probe_ok = 0, probe_result = ${JSON.stringify(probe.result)}
            WHERE scope = ${scope}`.raw

    /** The verify report of a scope (§11 "Backup verify" step 3); the floor moves only on success. */
    const recordVerify = (scope: string, verify: VerifyRecord): Effect.Effect<void, SqlError> =>
      verify.ok
        ? sql`UPDATE backup_state SET verified_at = ${verify.at}, verify_ok = 1, verify_result = ${JSON.stringify(verify.result)},
            verified_counts = ${JSON.stringify(verify.verified_counts)} WHERE scope = ${scope}`.raw
        : sql`UPDATE backup_state SET verified_at = ${verify.at}, verify_ok = 0, verify_result = ${JSON.stringify(verify.result)}
            WHERE scope = ${scope}`.raw

    const keyScopeValid = (scope: string | null) =>
      scope === null || configured.has(scope)
        ? Effect.void
        : Effect.fail(new ValidationFailed({ message: `key is invalid: scope: "${scope}" is not a configured scope`, issues: [{ path: "scope", message: "not a configured scope" }] }))

    const insertRecipient = (k: KeyRecipientAdd, now: string) =>
      Effect.gen(function*() {
        const same = yield* sql<{ seq: number }>`SELECT seq FROM key_recipient
          WHERE coalesce(scope, '') = ${k.scope ?? ""} AND recipient = ${k.recipient} AND retired_at IS NULL`
        if (same.length > 0) {
          return yield* new ValidationFailed({ message: `key is invalid: recipient: already an active recipient of ${k.scope ?? "the instance"}`, issues: [{ path: "recipient", message: "already an active recipient" }] })
        }
        yield* sql`INSERT INTO key_recipient (scope, recipient, origin, label, added_at, retired_at)
          VALUES (${k.scope}, ${k.recipient}, ${k.origin}, ${k.label ?? null}, ${now}, NULL)`.raw
        const rows = yield* sql<KeyRecipientOut>`SELECT * FROM key_recipient WHERE seq = last_insert_rowid()`
        return rows[0] as KeyRecipientOut
      })

    /** Every key_recipient row, oldest first (active and retired; never an identity: none is stored). */
    const listRecipients = (): Effect.Effect<ReadonlyArray<KeyRecipientOut>, SqlError> =>
      sql<KeyRecipientOut>`SELECT * FROM key_recipient ORDER BY seq`

    /** The recipients every new copy of `scope` (null: ops.sqlite) is encrypted to; empty: not keyed. */
    const activeRecipients = (scope: string | null): Effect.Effect<ReadonlyArray<string>, SqlError> =>
      Effect.map(
        sql<{ recipient: string }>`SELECT recipient FROM key_recipient WHERE coalesce(scope, '') = ${scope ?? ""} AND retired_at IS NULL ORDER BY seq`,
        (rows) => rows.map((r) => r.recipient)
      )

    /** A recipient for `scope` (key create: origin created; key add-recipient: added). */
    const addRecipient = Effect.fn("OpsStore.addRecipient")(function*(k: KeyRecipientAdd) {
      yield* keyScopeValid(k.scope)
      const now = yield* nowInstant
      return yield* tx(insertRecipient(k, now))
    })

    /**
     * key rotate: the recipients of `scope` that a key create made here are retired and the new
     * one added, in one transaction; recipients added by add-recipient stay. Answers the new row
     * and the retired ones.
     */
    const rotateRecipient = Effect.fn("OpsStore.rotateRecipient")(function*(scope: string | null, recipient: string, label?: string) {
      yield* keyScopeValid(scope)
      const now = yield* nowInstant
      return yield* tx(Effect.gen(function*() {
        const old = yield* sql<KeyRecipientOut>`SELECT * FROM key_recipient
          WHERE coalesce(scope, '') = ${scope ?? ""} AND origin = 'created' AND retired_at IS NULL ORDER BY seq`
        for (const r of old) yield* sql`UPDATE key_recipient SET retired_at = ${now} WHERE seq = ${r.seq}`.raw
        const added = yield* insertRecipient({ scope, recipient, origin: "created", label }, now)
        const retired = yield* sql<KeyRecipientOut>`SELECT * FROM key_recipient WHERE retired_at = ${now} AND coalesce(scope, '') = ${scope ?? ""} ORDER BY seq`
        return { added, retired }
      }))
    })

    /**
     * Logout: the approval session `sid` is over until `exp` (its cookie's expiry, seconds since
     * the epoch). One transaction: rows whose exp has passed are pruned (their cookies are
     * refused by their own expiry), then the row is added; ending a session twice keeps the first row.
     */
    const endSession = Effect.fn("OpsStore.endSession")(function*(sid: string, exp: number) {
      const now = yield* nowInstant
      const nowSeconds = Math.floor(Date.parse(now) / 1000)
      yield* tx(Effect.gen(function*() {
        // the trigger refuses deleting a row that is not expired by the file's own clock either
        yield* sql`DELETE FROM ended_session WHERE exp <= ${nowSeconds} AND exp <= CAST(strftime('%s', 'now') AS INTEGER)`.raw
        yield* sql`INSERT INTO ended_session (sid, exp, ended_at) VALUES (${sid}, ${exp}, ${now}) ON CONFLICT (sid) DO NOTHING`.raw
      }))
    })

    /** Whether logout ended the approval session `sid`. */
    const sessionEnded = Effect.fn("OpsStore.sessionEnded")(function*(sid: string) {
      const rows = yield* sql<{ n: number }>`SELECT count(*) AS n FROM ended_session WHERE sid = ${sid}`
      return (rows[0]?.n ?? 0) > 0
    })

    /**
     * Adds a redaction to the ledger (ops migration 0008). A redaction already there under the same
     * scope and seq is left as it is (the row is append-only): true when this call added it.
     */
    const appendLedger = (r: LedgerRedaction): Effect.Effect<boolean, SqlError> =>
      Effect.flatMap(nowInstant, (now) =>
        tx(Effect.gen(function*() {
          const there = yield* sql<{ n: number }>`SELECT count(*) AS n FROM redaction_ledger
            WHERE scope = ${r.scope} AND redaction_seq = ${r.seq}`
          if ((there[0]?.n ?? 0) > 0) return false
          yield* sql`INSERT INTO redaction_ledger (scope, redaction_seq, redaction_id, term_sha256, places, requested_by,
              decided_by, reason, at, place_list, recorded_at)
            VALUES (${r.scope}, ${r.seq}, ${r.id}, ${r.term_sha256}, ${r.places}, ${r.requested_by}, ${r.decided_by},
              ${r.reason}, ${r.at}, ${JSON.stringify(r.place_list)}, ${now})`.raw
          return true
        })))

    /** The ledger's redactions of a scope, by seq. */
    const listLedger = (scope: string): Effect.Effect<ReadonlyArray<LedgerRedaction>, SqlError> => listLedgerOn(sql, scope)

    return {
      sql,
      file,
      appendLedger,
      listLedger,
      endSession,
      sessionEnded,
      createGrant,
      listGrants,
      disableGrant,
      renameGrant,
      findActiveGrant,
      getBackupState,
      ensureBackupState,
      raiseVersionCount,
      listBackupStates,
      backupRunStatus,
      getBackupStateFull,
      recordBackupRun,
      setLastBackupAt,
      recordProbe,
      recordVerify,
      listRecipients,
      activeRecipients,
      addRecipient,
      rotateRecipient
    } as const
  })
}) {}
