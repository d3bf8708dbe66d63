/**
 * The nightly Markdown export of the restore probe (architecture.md §11.2 step 4): the export of
 * the restored file (so the archive is the proven backup state) as
 * <export_directory>/<scope>/<scope>-export-<UTC stamp with ms>-<8 hex>.tar.gz plus <file>.sha256
 * (sha256sum format). Each is written under a temporary name (0600) and hard-linked to its
 * name, never over an existing file. Groundnote never deletes old archives.
 */
import { randomBytes, randomUUID } from "node:crypto"
import { closeSync, fsyncSync, openSync, writeSync } from "node:fs"
import { join } from "node:path"
import { Effect, Either } from "effect"
import { errnoCode, linkNoOverwrite, removeFile } from "./fsutil.js"
import type { Check, ExportOut } from "./schemas.js"
import type { BackupWorker } from "./worker-client.js"

/** 20261107T031500.123Z: UTC with milliseconds, no characters a file system or shell minds. */
export const exportStamp = (ms: number): string => new Date(ms).toISOString().replace(/[-:]/g, "")

export const exportFileName = (scope: string, ms: number, hex = randomBytes(4).toString("hex")): string =>
  `${scope}-export-${exportStamp(ms)}-${hex}.tar.gz`

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
}

/** Writes the archive and its .sha256; the check nightly-export tells how it went. */
export const writeNightlyExport = (input: NightlyExportInput): Effect.Effect<{ readonly check: Check; readonly export: ExportOut | null }> => {
  const name = exportFileName(input.scope, input.now)
  const final = join(input.directory, name)
  const tmpArchive = join(input.directory, `.${name}.tmp-${randomUUID()}`)
  const tmpSha = join(input.directory, `.${name}.sha256.tmp-${randomUUID()}`)
  const fail = (detail: string) => ({ check: { check: "nightly-export", ok: false, detail }, export: null })
  return Effect.gen(function*() {
    const built = yield* Effect.either(input.worker.run({ op: "archive", file: input.file, target: tmpArchive, zone: input.zone, now: input.now }))
    if (Either.isLeft(built)) return fail(`the archive could not be built: ${built.left.code}`)
    const linked = yield* Effect.either(Effect.try({
      try: () => {
        writeNew(tmpSha, sha256Line(built.right.sha256, name))
        if (!linkNoOverwrite(tmpArchive, final)) return `${final} exists`
        if (!linkNoOverwrite(tmpSha, `${final}.sha256`)) return `${final}.sha256 exists`
        return null
      },
      catch: (e) => errnoCode(e) || "EIO"
    }))
    if (Either.isLeft(linked)) return fail(`writing ${final} failed: ${linked.left}`)
    if (linked.right !== null) return fail(linked.right)
    return {
      check: { check: "nightly-export", ok: true, detail: final },
      export: { file: final, bytes: built.right.bytes, sha256: built.right.sha256 }
    }
  }).pipe(Effect.ensuring(Effect.sync(() => {
    removeFile(tmpArchive)
    removeFile(tmpSha)
  })))
}
