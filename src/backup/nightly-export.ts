/**
 * The nightly Markdown export of the restore probe (architecture.md §11.2 step 4): the export of
 * the restored file (so the archive is the proven backup state) as
 * <export_directory>/<scope>/<scope>-export-<UTC stamp with ms>-<8 hex>.tar.gz plus <file>.sha256
 * (sha256sum format). Each is written under a temporary name (0600) and hard-linked to its
 * name, never over an existing file.
 *
 * A keyed scope (gaps.md §12 R5): the archive is built in the caller's private work directory
 * inside the data dir, age-encrypted as a stream to the scope's recipients into
 * <name>.tar.gz.age (the .sha256 is of that file), and only the encrypted file reaches the export
 * directory. Old archives stay, except two kinds that are removed once the new one is in place:
 * plaintext archives of a keyed scope, and archives stamped before the newest redaction the
 * exported file holds (the export is rewritten after a redaction).
 */
import { createHash, randomBytes, randomUUID } from "node:crypto"
import { closeSync, createReadStream, fsyncSync, openSync, readdirSync, writeSync } from "node:fs"
import { join } from "node:path"
import { Effect, Either } from "effect"
import { isAgeFile } from "../keys/header.js"
import { errnoCode, fsyncDir, linkNoOverwrite, removeFile } from "./fsutil.js"
import type { Check, ExportOut } from "./schemas.js"
import type { BackupWorker } from "./worker-client.js"

/** 20261107T031500.123Z: UTC with milliseconds, no characters a file system or shell minds. */
export const exportStamp = (ms: number): string => new Date(ms).toISOString().replace(/[-:]/g, "")

export const exportFileName = (scope: string, ms: number, hex = randomBytes(4).toString("hex")): string =>
  `${scope}-export-${exportStamp(ms)}-${hex}.tar.gz`

/** <scope>-export-<stamp>-<hex>.tar.gz[.age]: the stamp (epoch ms) and whether it is encrypted, or null for another name. */
export const parseExportFileName = (scope: string, name: string): { readonly ms: number; readonly encrypted: boolean } | null => {
  if (!name.startsWith(`${scope}-export-`)) return null
  const m = /^(\d{8})T(\d{6})\.(\d{3})Z-[0-9a-f]{8}\.tar\.gz(\.age)?$/.exec(name.slice(scope.length + "-export-".length))
  if (m === null) return null
  const [d, t, frac] = [m[1] ?? "", m[2] ?? "", m[3] ?? ""]
  const ms = Date.parse(`${d.slice(0, 4)}-${d.slice(4, 6)}-${d.slice(6, 8)}T${t.slice(0, 2)}:${t.slice(2, 4)}:${t.slice(4, 6)}.${frac}Z`)
  return Number.isNaN(ms) ? null : { ms, encrypted: m[4] !== undefined }
}

const sha256OfFile = (path: string): Promise<string> =>
  new Promise((resolve, reject) => {
    const hash = createHash("sha256")
    createReadStream(path).on("data", (c) => hash.update(c)).on("error", reject).on("end", () => resolve(hash.digest("hex")))
  })

/**
 * The archives of `scope` in `directory` that must go once `kept` is written: plaintext ones of a
 * keyed scope, and those stamped before the newest redaction (null: none). Each with its .sha256.
 */
export const archivesToRemove = (
  directory: string,
  scope: string,
  kept: string,
  keyed: boolean,
  redactedAt: number | null
): ReadonlyArray<string> =>
  readdirSync(directory).filter((name) => {
    if (name === kept) return false
    const parsed = parseExportFileName(scope, name)
    if (parsed === null) return false
    return (keyed && !parsed.encrypted) || (redactedAt !== null && parsed.ms < redactedAt)
  })

/** sha256sum's line for one file: "<hex>  <name>\n". */
export const sha256Line = (hex: string, name: string): string => `${hex}  ${name}\n`

const writeNew = (path: string, text: string): void => {
  const fd = openSync(path, "wx", 0o600)
  try {
    const data = Buffer.from(text, "utf8")
    let offset = 0
    while (offset < data.length) offset += writeSync(fd, data, offset, data.length - offset)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

export interface NightlyExportInput {
  readonly worker: BackupWorker
  readonly scope: string
  /** the restored file the export is built from */
  readonly file: string
  /** <export_directory>/<scope>, checked by the caller (a real 0700 directory of the service user) */
  readonly directory: string
  readonly zone: string
  /** export time, epoch ms */
  readonly now: number
  /** the scope's active recipients: non-empty → only an encrypted archive is written */
  readonly recipients?: ReadonlyArray<string>
  /** a private directory inside the data dir for the plaintext archive of a keyed scope */
  readonly work?: string
  /** the newest redaction the exported file holds (epoch ms), or null */
  readonly redactedAt?: number | null
}

/** Writes the archive and its .sha256; the check nightly-export tells how it went. */
export const writeNightlyExport = (input: NightlyExportInput): Effect.Effect<{ readonly check: Check; readonly export: ExportOut | null }> => {
  const recipients = input.recipients ?? []
  const keyed = recipients.length > 0
  if (keyed && input.work === undefined) throw new Error("a keyed scope's archive needs a private work directory")
  const name = `${exportFileName(input.scope, input.now)}${keyed ? ".age" : ""}`
  const final = join(input.directory, name)
  const tmpArchive = join(input.directory, `.${name}.tmp-${randomUUID()}`)
  const tmpSha = join(input.directory, `.${name}.sha256.tmp-${randomUUID()}`)
  const plainArchive = keyed ? join(input.work ?? "", `.${name}.plain-${randomUUID()}`) : tmpArchive
  const fail = (detail: string) => ({ check: { check: "nightly-export", ok: false, detail }, export: null })
  return Effect.gen(function*() {
    const built = yield* Effect.either(input.worker.run({ op: "archive", file: input.file, target: plainArchive, zone: input.zone, now: input.now }))
    if (Either.isLeft(built)) return fail(`the archive could not be built: ${built.left.code}`)
    let written = { bytes: built.right.bytes, sha256: built.right.sha256 }
    if (keyed) {
      const sealed = yield* Effect.either(input.worker.run({ op: "encrypt", source: plainArchive, target: tmpArchive, recipients }))
      if (Either.isLeft(sealed)) return fail(`the archive could not be encrypted: ${sealed.left.code}`)
      if (sealed.right.bytes !== sealed.right.expected || !isAgeFile(tmpArchive)) return fail("the encrypted archive has not the size the format demands")
      written = { bytes: sealed.right.bytes, sha256: yield* Effect.promise(() => sha256OfFile(tmpArchive)) }
    }
    const sha = written.sha256
    const linked = yield* Effect.either(Effect.try({
      try: () => {
        writeNew(tmpSha, sha256Line(sha, name))
        if (!linkNoOverwrite(tmpArchive, final)) return `${final} exists`
        if (!linkNoOverwrite(tmpSha, `${final}.sha256`)) return `${final}.sha256 exists`
        return null
      },
      catch: (e) => errnoCode(e) || "EIO"
    }))
    if (Either.isLeft(linked)) return fail(`writing ${final} failed: ${linked.left}`)
    if (linked.right !== null) return fail(linked.right)
    const stale = archivesToRemove(input.directory, input.scope, name, keyed, input.redactedAt ?? null)
    yield* Effect.sync(() => {
      for (const old of stale) {
        removeFile(join(input.directory, old))
        removeFile(join(input.directory, `${old}.sha256`))
      }
      if (stale.length > 0) fsyncDir(input.directory)
    })
    return {
      check: { check: "nightly-export", ok: true, detail: stale.length === 0 ? final : `${final} (removed ${stale.join(", ")})` },
      export: { file: final, bytes: written.bytes, sha256: sha }
    }
  }).pipe(Effect.ensuring(Effect.sync(() => {
    removeFile(tmpArchive)
    removeFile(tmpSha)
    if (plainArchive !== tmpArchive) removeFile(plainArchive)
  })))
}
