import { execFileSync } from "node:child_process"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { gunzipSync } from "node:zlib"
import { afterEach, describe, expect, it } from "vitest"
import { exportArchive, splitName } from "../../src/export/archive.js"
import type { ExportFiles } from "../../src/export/types.js"
import { tempDir } from "../support/env.js"

const cleanups: Array<() => void> = []
afterEach(() => {
  for (const c of cleanups.splice(0)) c()
})

const MTIME = 1_714_557_600 // 2024-05-01T10:00:00Z

const LONG_DIR = `graph/${"d".repeat(70)}`
const LONG_PATH = `${LONG_DIR}/${"n".repeat(60)}-ü.md` // > 100 bytes with the scope, fits with a prefix

const EXPORT: ExportFiles = {
  scope: "sales",
  files: [
    { path: "README.md", content: "# Groundnote export of sales\n" },
    { path: "empty.md", content: "" },
    { path: "exact-512.md", content: "x".repeat(512) },
    { path: LONG_PATH, content: "long name\n" },
    { path: "manifest.json", content: "{\n  \"scope\": \"sales\"\n}\n" },
    { path: "rules/sales-0001.md", content: "Umlaute äöü ß, emoji 🧾, NEL\u0085 and CR\r kept as bytes\n".repeat(40) }
  ]
}

/** Writes the archive, extracts it with the system tar and returns the extraction root. */
const extract = (archive: Buffer): { dir: string; file: string; out: string } => {
  const { dir, cleanup } = tempDir("gn-archive-")
  cleanups.push(cleanup)
  const file = join(dir, "sales.tar.gz")
  writeFileSync(file, archive)
  const out = join(dir, "out")
  mkdirSync(out)
  execFileSync("tar", ["-xzf", file, "-C", out])
  return { dir, file, out }
}

/** The ustar headers of an uncompressed tar (stops at the first zero block). */
const headers = (tar: Buffer): Array<Buffer> => {
  const found: Array<Buffer> = []
  let at = 0
  while (at + 512 <= tar.length) {
    const h = tar.subarray(at, at + 512)
    if (h.every((b) => b === 0)) break
    found.push(h)
    const size = parseInt(h.subarray(124, 135).toString("latin1"), 8)
    at += 512 + Math.ceil(size / 512) * 512
  }
  return found
}

const field = (h: Buffer, start: number, length: number): string => {
  const raw = h.subarray(start, start + length)
  const nul = raw.indexOf(0)
  return raw.subarray(0, nul === -1 ? length : nul).toString("utf8")
}

describe("exportArchive", () => {
  it("extracts with GNU tar to exactly the files' bytes under <scope>/", () => {
    const { out } = extract(exportArchive(EXPORT, { mtime: MTIME }))
    for (const f of EXPORT.files) {
      expect(readFileSync(join(out, "sales", f.path)).equals(Buffer.from(f.content, "utf8")), f.path).toBe(true)
    }
  })

  it("lists regular files, mode 0644, owner 0/0, the given mtime", () => {
    const { file } = extract(exportArchive(EXPORT, { mtime: MTIME }))
    const listing = execFileSync("tar", ["-tvzf", file, "--numeric-owner", "--utc"], { encoding: "utf8" })
      .trim().split("\n")
    expect(listing).toHaveLength(EXPORT.files.length)
    for (const [i, line] of listing.entries()) {
      expect(line).toMatch(/^-rw-r--r-- 0\/0 +\d+ 2024-05-01 10:00 sales\//)
      expect(line.endsWith(`sales/${EXPORT.files[i]?.path ?? ""}`)).toBe(true)
    }
  })

  it("writes valid ustar headers: magic, version, checksum, and the prefix field for a long name", () => {
    const tar = gunzipSync(exportArchive(EXPORT, { mtime: MTIME }))
    expect(tar.length % 512).toBe(0)
    expect(tar.subarray(tar.length - 1024).every((b) => b === 0)).toBe(true)
    const hs = headers(tar)
    expect(hs).toHaveLength(EXPORT.files.length)
    for (const h of hs) {
      expect(h.subarray(257, 263).toString("latin1")).toBe("ustar\u0000")
      expect(h.subarray(263, 265).toString("latin1")).toBe("00")
      expect(String.fromCharCode(h[156] ?? 0)).toBe("0")
      expect(field(h, 100, 8)).toBe("0000644")
      const stored = parseInt(field(h, 148, 8).trim(), 8)
      const copy = Buffer.from(h)
      copy.fill(0x20, 148, 156)
      expect(copy.reduce((sum, b) => sum + b, 0)).toBe(stored)
    }
    const long = hs.find((h) => field(h, 345, 155) !== "")
    expect(long).toBeDefined()
    expect(field(long ?? Buffer.alloc(512), 345, 155)).toBe(`sales/${LONG_DIR}`)
    expect(field(long ?? Buffer.alloc(512), 0, 100)).toBe(LONG_PATH.slice(LONG_DIR.length + 1))
    expect(Buffer.byteLength(`sales/${LONG_PATH}`)).toBeGreaterThan(100)
  })

  it("gives the same bytes for the same files and mtime", () => {
    expect(exportArchive(EXPORT, { mtime: MTIME }).equals(exportArchive(EXPORT, { mtime: MTIME }))).toBe(true)
  })

  it("refuses a name that cannot be split into prefix and name", () => {
    const tooLong = { scope: "sales", files: [{ path: `rules/${"x".repeat(101)}.md`, content: "" }] }
    expect(() => exportArchive(tooLong, { mtime: MTIME })).toThrow(/does not fit/)
    expect(() => splitName(`${"p".repeat(156)}/short.md`)).toThrow(/does not fit/)
    expect(splitName(`${"p".repeat(155)}/short.md`).prefix.length).toBe(155)
    expect(splitName("sales/README.md").prefix.length).toBe(0)
  })

  it("refuses paths that would leave the scope folder, duplicates and a bad mtime", () => {
    for (const path of ["../evil.md", "/abs.md", "a//b.md", "a/./b.md", ""]) {
      expect(() => exportArchive({ scope: "sales", files: [{ path, content: "" }] }, { mtime: MTIME }), path).toThrow()
    }
    const dup = { scope: "sales", files: [{ path: "a.md", content: "" }, { path: "a.md", content: "" }] }
    expect(() => exportArchive(dup, { mtime: MTIME })).toThrow(/duplicate/)
    expect(() => exportArchive({ scope: "../x", files: [] }, { mtime: MTIME })).toThrow()
    expect(() => exportArchive(EXPORT, { mtime: -1 })).toThrow(/mtime/)
    expect(() => exportArchive(EXPORT, { mtime: 1.5 })).toThrow(/mtime/)
  })
})
