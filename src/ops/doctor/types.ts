/**
 * groundnote doctor (gaps.md §9, architecture.md §11 Finding): every finding is a pure function
 * of DoctorInput, which the CLI gathers (facts.ts) with the service up or down. A finding that
 * needs something it did not get says `skip` and why.
 *
 * The config and the ops status are described structurally here (the fields doctor reads), so
 * doctor imports neither the config loader nor a store: groundnote.json's decoded ConfigFile
 * and the GET /ops/status answer fit these types as they are.
 */

export type FindingStatus = "ok" | "warn" | "fail" | "skip"

/** architecture.md §11: {id, status, message, remedy}. */
export interface Finding {
  readonly id: FindingId
  readonly status: FindingStatus
  readonly message: string
  readonly remedy: string | null
}

/** Every finding, in the order doctor reports them. */
export const FINDING_IDS = [
  "config-valid",
  "secrets-present",
  "secrets-distinct",
  "data-dir-permissions",
  "at-rest",
  "secure-delete",
  "ops-socket",
  "service-version",
  "scopes-unlocked",
  "backup-age",
  "probe-age",
  "verify-result",
  "redaction-ledger",
  "litestream-binary",
  "scope-keys",
  "copies-encrypted",
  "key-identity",
  "lexicon",
  "semantic-model",
  "reranker-key",
  "reranker-budget",
  "clock-skew"
] as const
export type FindingId = (typeof FINDING_IDS)[number]

/** The keys of groundnote.json doctor reads (a decoded ConfigFile is one). */
export interface DoctorConfig {
  readonly instance: string
  /** config.zone (backup nightly's digest counts days in it) */
  readonly zone: string
  /** backup nightly POSTs the digest to approval.digest_url when it is set */
  readonly approval?: { readonly digest_url?: string | undefined } | undefined
  readonly scopes: ReadonlyArray<{ readonly name: string }>
  readonly backup:
    | { readonly kind: "copy"; readonly directory: string; readonly deadman_url: string | null; readonly export_directory?: string | undefined }
    | { readonly kind: "litestream"; readonly deadman_url: string | null; readonly export_directory?: string | undefined }
  /** cloudflare-access mode: the team domain is doctor's reference clock */
  readonly access?: { readonly team_domain: string } | undefined
  readonly at_rest?: { readonly kind: "volume"; readonly attested_at?: string | undefined } | undefined
  readonly doctor: { readonly max_backup_age_hours: number; readonly max_probe_age_hours: number }
  readonly search: {
    readonly semantic: { readonly enabled: boolean }
    readonly reranker: { readonly enabled: false } | { readonly enabled: true; readonly monthly_cap_usd: number }
  }
}

/** groundnote.json as the CLI loaded it: decoded, or why not (StartRefusal code and message). */
export type ConfigResult =
  | { readonly ok: true; readonly path: string; readonly config: DoctorConfig }
  | { readonly ok: false; readonly path: string; readonly code: string; readonly message: string }

/** The GET /ops/status fields doctor reads (OpsStatus, architecture.md §11). */
export interface DoctorStatus {
  readonly version: string
  readonly now: string
  readonly backup: {
    readonly kind: "copy" | "litestream"
    readonly ops_backup_at: string | null
  }
  readonly scopes: ReadonlyArray<{
    readonly scope: string
    readonly created: boolean
    readonly locked: boolean
    readonly lock_reason: string | null
    readonly last_backup_at: string | null
    readonly verified_at: string | null
    readonly verify_ok: boolean | null
    readonly probed_at: string | null
    readonly probe_ok: boolean | null
  }>
  readonly usage?: { readonly reranker_month_usd: number } | undefined
}

/** The service over the ops socket: its status, or the CLI's error code and message. */
export type ServiceFacts =
  | { readonly reachable: true; readonly status: DoctorStatus }
  | { readonly reachable: false; readonly code: string; readonly message: string }

/** The data dir's permissions as the service checks them at start (architecture.md §3). */
export interface DataDirFacts {
  readonly path: string
  readonly exists: boolean
  /** each problem names the path, its mode or owner, and the fix */
  readonly problems: ReadonlyArray<string>
}

/** Whether the data dir lies on an encrypted volume, as far as the host tells. */
export interface VolumeFacts {
  /** true: detected; false: the volume is known and not encrypted; null: cannot tell (container, network file system) */
  readonly encrypted: boolean | null
  /** how it was detected or why not, e.g. "dm-crypt (CRYPT-LUKS2) under /dev/dm-0 mounted at /srv" */
  readonly how: string
}

/** The litestream binary (backup kind litestream). */
export interface LitestreamFacts {
  readonly binary: string | null
  /** `litestream version`, null when it does not run */
  readonly version: string | null
  /** LITESTREAM_CONFIG or /etc/litestream.yml */
  readonly configPath: string
  readonly configExists: boolean
}

/** The difference between this host's clock and a reference (e.g. the Date of an HTTPS answer). */
export interface ClockFacts {
  /** reference minus local, milliseconds */
  readonly offsetMs: number
  readonly source: string
}

/**
 * Each scope file against the redaction ledger of ops.sqlite (gaps.md §12), read from the files
 * with the service up or down; `read: false` says why they could not be read.
 */
export type LedgerFacts =
  | {
    readonly read: true
    readonly scopes: ReadonlyArray<{
      readonly scope: string
      /** ids of the ledger's redactions the file lacks */
      readonly behind: ReadonlyArray<string>
      /** ids of the file's redactions the ledger lacks */
      readonly unrecorded: ReadonlyArray<string>
      /** how many redactions the file holds */
      readonly held: number
    }>
  }
  | { readonly read: false; readonly why: string }

/**
 * The storage hygiene of each scope file (gaps.md §12, R1), read on a read-only connection the
 * CLI host opened the way the service opens its own: the connection's secure_delete (1 = ON) and
 * temp_store (2 = MEMORY), and the FTS5 tables without their secure-delete option.
 */
export type ScopeFileHygiene =
  | {
    readonly scope: string
    readonly file: string
    readonly secureDelete: number
    readonly tempStore: number
    readonly ftsWithout: ReadonlyArray<string>
  }
  | { readonly scope: string; readonly file: string; readonly error: string }
/** The keys of encrypted copies (gaps.md §12 R5) as GET /ops/keys and the files show them. */
export interface KeyFacts {
  /** every key scope with an active recipient (null: the instance, ops.sqlite) and those recipients */
  readonly keyed: ReadonlyArray<{ readonly scope: string | null; readonly recipients: ReadonlyArray<string> }>
  /** plaintext copies or archives of a keyed scope in the backup or export directory */
  readonly plaintext: ReadonlyArray<string>
  /** per keyed scope: whether GROUNDNOTE_KEY_DIR holds an identity of one of its active recipients */
  readonly identities: ReadonlyArray<{
    readonly scope: string | null
    readonly state: "ok" | "missing" | "no-match" | "too-open"
    readonly detail: string
  }>
}

/** Stage a's lexicon (share/lexicon) as this installation reads it. */
export type LexiconFacts =
  | { readonly loaded: true; readonly path: string; readonly groups: number; readonly terms: number }
  | { readonly loaded: false; readonly path: string; readonly why: string }

export interface DoctorInput {
  /** the CLI's clock, epoch ms */
  readonly now: number
  /** the environment doctor runs with: run it with the service's environment file */
  readonly env: Readonly<Record<string, string | undefined>>
  readonly cliVersion: string
  readonly config: ConfigResult
  readonly dataDir: DataDirFacts
  readonly service: ServiceFacts
  readonly volume: VolumeFacts
  /** null when backup.kind is not litestream or the config did not load */
  readonly litestream: LitestreamFacts | null
  /**
   * semantic-model, reranker-key and reranker-budget as the stage modules find them
   * (src/search/semantic/check.ts, src/search/reranker/findings.ts, through the CLI host);
   * null when they were not gathered
   */
  readonly stages: ReadonlyArray<Finding> | null
  /** the clock against a reference; `unavailable` says why there is none; null: not asked */
  readonly clock: ClockFacts | { readonly unavailable: string } | null
  /** the scope files against the redaction ledger (through the CLI host); null when not gathered */
  readonly ledger: LedgerFacts | null
  /** every scope file of the data dir (CLI host); null when not gathered */
  readonly storage: ReadonlyArray<ScopeFileHygiene> | null
  /** keys of encrypted copies; null when the service did not answer GET /ops/keys */
  readonly keys?: KeyFacts | null
  /** stage a's lexicon; null or absent when not gathered */
  readonly lexicon?: LexiconFacts | null
}
