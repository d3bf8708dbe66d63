/**
 * Reseed of a Litestream replica after a redaction (gaps.md §12 R5, backup kind litestream): the
 * generations Litestream wrote before a redaction hold the erased text (encrypted or not), so the
 * backup run makes Litestream start a new generation and deletes the older ones once the new one
 * is verified.
 *
 * Litestream 0.3.13 keeps the name of its current generation in `.<file>-litestream/generation`
 * beside the live file (written once, when the generation starts) and reads it at every sync
 * (each monitor interval, 1 s by default); a missing file is "no generation exists" and starts a
 * new generation with a fresh snapshot of the whole file. So, per scope with a redaction:
 *
 *   1. the current generation started before the newest redaction (the generation file's mtime):
 *      the file is removed and the run waits until Litestream has written another one;
 *   2. the new generation is verified: restored on its own (`litestream restore -generation`,
 *      with the identity of a keyed scope) into a private directory and checked: integrity,
 *      meta-scope and at least the redactions the live file had when the run began;
 *   3. a file:// replica: every other generation directory under `<replica>/generations/` is
 *      deleted. Any other replica (s3, gcs, abs, sftp): the run says which generations remain for
 *      the operator (or Litestream's retention) to delete (docs/backup.md).
 *
 * A scope whose current generation started after its newest redaction and whose file:// replica
 * holds no other generation has nothing to reseed (no item). Litestream not running: the new
 * generation never comes, the item fails and nothing is deleted.
 */
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs"
import { join } from "node:path"
import { Effect, Either } from "effect"
import { openConnection } from "../db/connection.js"
import * as C from "./checks.js"
import { fetchBackup } from "./fetch.js"
import { fileReplicaDir, type LitestreamTarget, litestreamMetaDir, replicaUrl } from "./litestream-config.js"
import type { Check, RunScopeItem } from "./schemas.js"
import type { BackupWorker } from "./worker-client.js"

export interface ReseedInput {
  readonly worker: BackupWorker
  readonly dataDir: string
  readonly scope: string
  /** the live scope file */
  readonly live: string
  readonly replica: LitestreamTarget
  readonly env: Readonly<Record<string, string | undefined>>
  /** a private directory for the verification restore */
  readonly tmpDir: string
  /** how long to wait for Litestream's new generation and its first snapshot */
  readonly waitMs: number
}

const GENERATION_RE = /^[0-9a-f]{16}$/

interface Redactions {
  readonly count: number
  /** epoch ms of the newest redaction */
  readonly newest: number
}

const redactionsOf = (live: string): Effect.Effect<Redactions> =>
  Effect.scoped(Effect.gen(function*() {
    const sql = yield* openConnection(live, { readonly: true })
    const rows = yield* sql.unsafe<{ n: number; at: string | null }>("SELECT count(*) AS n, max(at) AS at FROM redaction")
    return { count: rows[0]?.n ?? 0, newest: rows[0]?.at === null || rows[0]?.at === undefined ? 0 : Date.parse(rows[0].at) }
  })).pipe(Effect.orElseSucceed(() => ({ count: 0, newest: 0 })))

/** The current generation and when it started (the generation file's mtime), or null when there is none. */
const currentGeneration = (metaDir: string): { readonly name: string; readonly startedAt: number } | null => {
  try {
    const file = join(metaDir, "generation")
    const name = readFileSync(file, "utf8").trim()
    return GENERATION_RE.test(name) ? { name, startedAt: statSync(file).mtimeMs } : null
  } catch {
    return null
  }
}

/** Generation names in a file:// replica directory. */
const replicaGenerations = (dir: string): ReadonlyArray<string> => {
  try {
    return readdirSync(join(dir, "generations")).filter((n) => GENERATION_RE.test(n))
  } catch {
    return []
  }
}

const sleep = (ms: number) => Effect.sleep(`${ms} millis`)

/** The reseed of one scope: its run item, or null when there is nothing to do. */
export const reseedScope = (input: ReseedInput): Effect.Effect<RunScopeItem | null> =>
  Effect.gen(function*() {
    const { scope } = input
    if (!existsSync(input.live)) return null
    const redactions = yield* redactionsOf(input.live)
    if (redactions.count === 0) return null
    const url = replicaUrl(input.replica, { kind: "scope", scope })
    const dir = fileReplicaDir(url)
    const item = (ok: boolean, detail: string): RunScopeItem => ({ scope, ok, file: url, bytes: null, detail })
    const metaDir = litestreamMetaDir(input.live)
    let current = currentGeneration(metaDir)
    if (current === null) return item(false, "reseed: Litestream has no generation of this file: is it running with the config of groundnote backup litestream-config?")

    if (current.startedAt <= redactions.newest) {
      // 1. a new generation: Litestream finds no generation file at its next sync
      const old = current.name
      rmSync(join(metaDir, "generation"), { force: true })
      const deadline = Date.now() + input.waitMs
      current = null
      while (Date.now() < deadline) {
        const now = currentGeneration(metaDir)
        if (now !== null && now.name !== old) {
          current = now
          break
        }
        yield* sleep(100)
      }
      if (current === null) {
        return item(false, `reseed: Litestream started no new generation within ${Math.round(input.waitMs / 1000)} s (is it running?); nothing was deleted`)
      }
    } else if (dir === null || replicaGenerations(dir).every((g) => g === current?.name)) {
      // reseeded already (another replica kind: the run said what stays, once)
      return null
    }

    // 2. verify the new generation on its own (its first snapshot may still be on its way)
    const generation = current.name
    const target = join(input.tmpDir, `${scope}-${generation}.sqlite`)
    const deadline = Date.now() + input.waitMs
    // the copy path of fetch reads identities itself; for a replica a missing one is a failed check
    const fetchGeneration = fetchBackup({ kind: "litestream", file: { kind: "scope", scope }, dataDir: input.dataDir, directory: null, target, env: input.env, replica: input.replica, generation, worker: input.worker })
      .pipe(Effect.catchTag("IdentityMissing", (e) => Effect.succeed<Check>({ check: "fetch-litestream", ok: false, detail: `identity-missing: ${e.message}` })))
    let fetched = yield* fetchGeneration
    while (!fetched.ok && Date.now() < deadline && !(fetched.detail ?? "").startsWith("identity-missing")) {
      yield* sleep(250)
      rmSync(target, { force: true })
      fetched = yield* fetchGeneration
    }
    if (!fetched.ok) return item(false, `reseed: the new generation ${generation} could not be restored: ${fetched.detail ?? "?"}; nothing was deleted`)
    const inspected = yield* Effect.either(input.worker.run({ op: "inspect", file: target, kind: "scope", integrity: true, sample: false, tables: ["redaction"] }))
    if (Either.isLeft(inspected)) return item(false, `reseed: the new generation ${generation} is unreadable: ${inspected.left.code}; nothing was deleted`)
    const facts = inspected.right
    const bad = [C.integrity(facts), C.metaScope(facts, scope)].find((c) => !c.ok)
    if (bad !== undefined) return item(false, `reseed: the new generation ${generation} failed ${bad.check}: ${bad.detail ?? ""}; nothing was deleted`)
    if ((facts.counts.redaction ?? 0) < redactions.count) {
      return item(false, `reseed: the new generation ${generation} holds ${facts.counts.redaction ?? 0} of ${redactions.count} redactions; nothing was deleted`)
    }

    // 3. the older generations go
    if (dir === null) {
      return item(true, `reseed: new generation ${generation} verified; the generations before it stay in ${url} until you delete them or Litestream's retention does (docs/backup.md)`)
    }
    const older = replicaGenerations(dir).filter((g) => g !== generation)
    for (const g of older) rmSync(join(dir, "generations", g), { recursive: true, force: true })
    return item(true, `reseed: new generation ${generation} verified; ${older.length} older ${older.length === 1 ? "generation" : "generations"} deleted`)
  })
