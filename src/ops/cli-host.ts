/**
 * What the CLI reaches beyond the thin client (architecture.md §2 AT6): reading groundnote.json,
 * restore (which runs in the CLI without the service), the stage b/c findings and the redaction
 * ledger facts of doctor. The
 * implementation lives below the adapters (src/operations/ops-cli-host.ts) and comes only through
 * the one allowed dynamic import of ../main.js in cli.ts, so the CLI's static import closure
 * holds no config loader, migration or store. The types here are structural (a decoded
 * ConfigFile fits DoctorConfig), so this file imports nothing of those either.
 */
import type { Effect } from "effect"
import type { BackupKind, Check, RestoreAnswer } from "../backup/schemas.js"
import type { ConfigResult, Finding, LedgerFacts } from "./doctor/types.js"

/** A failure of a host call, ready for the CLI: its code, message and exit code (1 refused, 3 a check failed). */
export interface HostFailure {
  readonly code: string
  readonly message: string
  readonly exitCode: 1 | 3
  /** restore-check-failed: every check with its verdict */
  readonly checks?: ReadonlyArray<Check>
}

export interface HostRestoreRequest {
  readonly env: Record<string, string | undefined>
  readonly cwd: string
  readonly to: string
  /** the scope to restore; absent with ops: true (ops.sqlite) */
  readonly scope?: string
  readonly ops?: boolean
  readonly from?: BackupKind
  readonly progress?: (line: string) => void
}

export interface StageFindingsInput {
  readonly env: Record<string, string | undefined>
  readonly cwd: string
  /** usage.reranker_month_usd of GET /ops/status; null when the service was not reachable */
  readonly spentUsd: number | null
  /** why the service's figures are missing (the ops-socket finding's code), or null */
  readonly serviceDown: string | null
}

/** What `groundnote backup litestream-config` prints: the YAML text and each file's replica. */
export interface LitestreamConfigAnswer {
  readonly config: string
  readonly files: ReadonlyArray<{ readonly file: string; readonly path: string; readonly url: string; readonly recipients: ReadonlyArray<string> }>
}

export interface CliHost {
  /** groundnote.json (GROUNDNOTE_CONFIG) without the environment's secrets; never fails */
  readonly loadConfig: (env: Record<string, string | undefined>, cwd: string) => Effect.Effect<ConfigResult>
  /** groundnote restore, without the service (architecture.md §11 "Restore") */
  readonly restore: (req: HostRestoreRequest) => Effect.Effect<RestoreAnswer, HostFailure>
  /** groundnote backup litestream-config: groundnote.json and the recipients in ops.sqlite, without the service */
  readonly litestreamConfig: (env: Record<string, string | undefined>, cwd: string) => Effect.Effect<LitestreamConfigAnswer, HostFailure>
  /** doctor's semantic-model, reranker-key and reranker-budget findings from the stage modules */
  readonly stageFindings: (input: StageFindingsInput) => Effect.Effect<ReadonlyArray<Finding>>
  /** doctor's redaction-ledger facts: every scope file against the ledger of ops.sqlite, read only */
  readonly ledgerFacts: (env: Record<string, string | undefined>, cwd: string) => Effect.Effect<LedgerFacts>
}
