/**
 * The export as a POSIX ustar .tar.gz of <scope>/<path> entries (architecture.md §4.4), built from
 * node built-ins only: no archive dependency to audit or update.
 *
 * Every entry is a regular file, mode 0644, uid/gid 0, empty uname/gname, the given mtime. A name
 * longer than 100 bytes is split into prefix (≤ 155) and name (≤ 100) at a slash; a name that
 * cannot be split that way is refused. The archive ends with two zero blocks and is gzipped.
 * The same files and mtime give the same bytes.
 */
import { gzipSync } from "node:zlib"
import type { ExportFiles } from "./types.js"

const BLOCK = 512
const NAME_MAX = 100
const PREFIX_MAX = 155
/** 11 octal digits: the largest size and mtime a ustar header holds */
const OCTAL_11_MAX = 0o77777777777

export interface ArchiveOptions {
  /** modification time of every entry, epoch seconds */
  readonly mtime: number
}

/** `value` as zero-padded octal in a field of `width` bytes, NUL-terminated. */
const octal = (value: number, width: number): string => `${value.toString(8).padStart(width - 1, "0")}\u0000`

/** Splits a UTF-8 path into ustar prefix and name, or throws when it does not fit. */
export const splitName = (full: string): { readonly name: Buffer; readonly prefix: Buffer } => {
  const bytes = Buffer.from(full, "utf8")
  if (bytes.length <= NAME_MAX) return { name: bytes, prefix: Buffer.alloc(0) }
  // '/' is one byte in UTF-8 and never part of a multi-byte sequence, so byte offsets are safe
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] !== 0x2f) continue
    const prefix = bytes.subarray(0, i)
    const name = bytes.subarray(i + 1)
    if (prefix.length > PREFIX_MAX) break
    if (name.length > 0 && name.length <= NAME_MAX) return { name, prefix }
  }
  throw new Error(`archive: the name ${JSON.stringify(full)} does not fit a ustar header (name ≤ 100, prefix ≤ 155 bytes)`)
}

const checkPath = (path: string): void => {
  const parts = path.split("/")
  if (path.length === 0 || parts.some((p) => p === "" || p === "." || p === "..") || path.includes("\u0000")) {
    throw new Error(`archive: refusing the path ${JSON.stringify(path)}`)
  }
}

/** One 512-byte ustar header of a regular file. */
const header = (full: string, size: number, mtime: number): Buffer => {
  if (!Number.isSafeInteger(size) || size < 0 || size > OCTAL_11_MAX) throw new Error(`archive: size ${size} out of range`)
  const { name, prefix } = splitName(full)
  const h = Buffer.alloc(BLOCK, 0)
  name.copy(h, 0)
  h.write(octal(0o644, 8), 100, "latin1") // mode
  h.write(octal(0, 8), 108, "latin1") // uid
  h.write(octal(0, 8), 116, "latin1") // gid
  h.write(octal(size, 12), 124, "latin1") // size
  h.write(octal(mtime, 12), 136, "latin1") // mtime
  h.write("        ", 148, "latin1") // checksum: spaces while summing
  h.write("0", 156, "latin1") // typeflag: regular file
  // linkname (157..256) stays empty
  h.write("ustar\u0000", 257, "latin1") // magic
  h.write("00", 263, "latin1") // version
  // uname (265..296) and gname (297..328) stay empty: extraction falls back to uid/gid 0
  h.write(octal(0, 8), 329, "latin1") // devmajor
  h.write(octal(0, 8), 337, "latin1") // devminor
  prefix.copy(h, 345)
  let sum = 0
  for (const byte of h) sum += byte
  h.write(`${sum.toString(8).padStart(6, "0")}\u0000 `, 148, "latin1")
  return h
}

/** The files as <scope>/<path> regular-file entries of a ustar tar, gzipped. */
export const exportArchive = (exp: ExportFiles, opts: ArchiveOptions): Buffer => {
  const mtime = opts.mtime
  if (!Number.isSafeInteger(mtime) || mtime < 0 || mtime > OCTAL_11_MAX) throw new Error(`archive: mtime ${mtime} out of range`)
  checkPath(exp.scope)
  if (exp.scope.includes("/")) throw new Error(`archive: refusing the scope ${JSON.stringify(exp.scope)}`)
  const seen = new Set<string>()
  const chunks: Array<Buffer> = []
  for (const file of exp.files) {
    checkPath(file.path)
    if (seen.has(file.path)) throw new Error(`archive: duplicate path ${JSON.stringify(file.path)}`)
    seen.add(file.path)
    const data = Buffer.from(file.content, "utf8")
    chunks.push(header(`${exp.scope}/${file.path}`, data.length, mtime), data)
    const pad = (BLOCK - (data.length % BLOCK)) % BLOCK
    if (pad > 0) chunks.push(Buffer.alloc(pad, 0))
  }
  chunks.push(Buffer.alloc(2 * BLOCK, 0))
  return gzipSync(Buffer.concat(chunks))
}
