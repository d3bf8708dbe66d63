/**
 * The Litestream config of a data dir (backup kind litestream; gaps.md §12 R5, docs/backup.md
 * «Litestream»): ops.sqlite and every configured scope file, each replicated to
 * `<backup.target>/<backup.prefix>/ops` or `…/scopes/<scope>`. A keyed file (a scope with a
 * recipient in key_recipient; ops.sqlite with an instance recipient) gets Litestream 0.3.13's
 * `age: {recipients: [...]}` block with its active recipients, so every snapshot and WAL segment
 * of its replica is age ciphertext. The printed config never holds an identity; the temporary
 * config of a restore (restoreConfigText) adds the identities and lives only as long as the
 * restore.
 *
 * Scalars are written as double-quoted YAML strings (JSON's escaping is YAML's), so a path with
 * spaces or a colon stays one value. Litestream expands `$VAR` in its config: a `$` in a path or
 * URL is refused instead of being expanded.
 */
import { join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import type { BackupFile } from "./fetch.js"
import { filePathIn } from "./fetch.js"
import type { KeyRecipients } from "./litestream-keys.js"

/** backup.target and backup.prefix of kind litestream. */
export interface LitestreamTarget {
  readonly target: string
  readonly prefix: string
}

/** The target of a backup config, or null for kind copy (no replica is named). */
export const litestreamTargetOf = (backup: { readonly kind: string; readonly target?: string; readonly prefix?: string }): LitestreamTarget | null =>
  backup.kind === "litestream" && backup.target !== undefined && backup.prefix !== undefined ? { target: backup.target, prefix: backup.prefix } : null

/** The replica URL of one file: `<target>/<prefix>/ops` or `<target>/<prefix>/scopes/<scope>`. */
export const replicaUrl = (t: LitestreamTarget, file: BackupFile): string => {
  const base = t.target.replace(/\/+$/, "")
  const prefix = t.prefix.replace(/^\/+|\/+$/g, "")
  const rest = file.kind === "ops" ? "ops" : `scopes/${file.scope}`
  return prefix === "" ? `${base}/${rest}` : `${base}/${prefix}/${rest}`
}

/** The directory of a file:// replica URL, or null for any other kind of replica. */
export const fileReplicaDir = (url: string): string | null => (url.startsWith("file://") ? fileURLToPath(url) : null)

/** The key of a file in key_recipient: the scope, or null for ops.sqlite (the instance). */
export const keyOf = (file: BackupFile): string | null => (file.kind === "ops" ? null : file.scope)

export interface LitestreamDb {
  readonly file: BackupFile
  /** the live file, absolute */
  readonly path: string
  readonly url: string
  /** active recipients; empty: the replica is plaintext */
  readonly recipients: ReadonlyArray<string>
  /** only in a restore's temporary config */
  readonly identities?: ReadonlyArray<string>
}

export interface ConfigInput {
  readonly dataDir: string
  /** configured scope names, in config order */
  readonly scopes: ReadonlyArray<string>
  readonly target: LitestreamTarget
  readonly recipients: KeyRecipients
}

/** One entry per file: ops.sqlite first, then every configured scope in config order. */
export const litestreamDbs = (input: ConfigInput): ReadonlyArray<LitestreamDb> => {
  const files: ReadonlyArray<BackupFile> = [{ kind: "ops" }, ...input.scopes.map((scope): BackupFile => ({ kind: "scope", scope }))]
  return files.map((file) => ({
    file,
    path: filePathIn(resolve(input.dataDir), file),
    url: replicaUrl(input.target, file),
    recipients: input.recipients.active.get(keyOf(file)) ?? []
  }))
}

/** A scalar as a double-quoted YAML string; refuses `$` (Litestream would expand it). */
const quoted = (s: string): string => {
  if (s.includes("$")) throw new LitestreamConfigInvalid(`"${s}" contains "$", which Litestream expands as an environment variable: choose a path and a backup.target without it`)
  return JSON.stringify(s)
}

export class LitestreamConfigInvalid extends Error {}

const list = (indent: string, items: ReadonlyArray<string>): Array<string> => items.map((i) => `${indent}- ${quoted(i)}`)

/** The YAML text of `dbs` (with a heading comment). Throws LitestreamConfigInvalid for a `$` in a value. */
export const renderLitestreamConfig = (dbs: ReadonlyArray<LitestreamDb>, heading: ReadonlyArray<string> = []): string => {
  const lines = [...heading.map((h) => `# ${h}`), "dbs:"]
  for (const db of dbs) {
    lines.push(`  - path: ${quoted(db.path)}`, "    replicas:", `      - url: ${quoted(db.url)}`)
    const identities = db.identities ?? []
    if (db.recipients.length > 0 || identities.length > 0) {
      lines.push("        age:")
      if (identities.length > 0) lines.push("          identities:", ...list("            ", identities))
      if (db.recipients.length > 0) lines.push("          recipients:", ...list("            ", db.recipients))
    }
  }
  return `${lines.join("\n")}\n`
}

/** The config `groundnote backup litestream-config` prints for a data dir. */
export const litestreamConfigText = (input: ConfigInput): string => {
  const dbs = litestreamDbs(input)
  const keyed = dbs.filter((d) => d.recipients.length > 0).map((d) => (d.file.kind === "ops" ? "ops.sqlite" : d.file.scope))
  return renderLitestreamConfig(dbs, [
    `Litestream 0.3.13 config of the Groundnote data dir ${resolve(input.dataDir)}`,
    "written by `groundnote backup litestream-config` (docs/backup.md); print it again after",
    "`groundnote scope create` or a key change and restart Litestream. Never put an identity here.",
    keyed.length === 0 ? "No file is keyed: every replica is plaintext." : `Encrypted with age to their recipients: ${keyed.join(", ")}.`
  ])
}

/** The temporary config of `litestream restore` for one keyed file: its entry with the identities. */
export const restoreConfigText = (db: LitestreamDb, identities: ReadonlyArray<string>): string =>
  renderLitestreamConfig([{ ...db, identities }])

/** Litestream's own directory beside a live file: `.<file>-litestream/` (its current generation in `generation`). */
export const litestreamMetaDir = (live: string): string => {
  const slash = live.lastIndexOf("/")
  return join(live.slice(0, slash + 1), `.${live.slice(slash + 1)}-litestream`)
}
