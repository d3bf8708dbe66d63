/** checkBackupDirectory at start (architecture.md §3): directory and export_directory never inside the data dir. */
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import { Effect, Either } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { checkBackupDirectory } from "../../src/config/cross-checks.js"
import { tempDir, testConfig } from "../support/env.js"

let dir: string
let cleanup: () => void
beforeEach(() => {
  ;({ dir, cleanup } = tempDir())
})
afterEach(() => cleanup())

const check = (backup: Record<string, unknown>) => {
  const data = join(dir, "data")
  mkdirSync(data, { mode: 0o700, recursive: true })
  const c = testConfig(data, { backup })
  return Effect.runSync(Effect.either(checkBackupDirectory(c.file, c.env)))
}

describe("checkBackupDirectory", () => {
  it("an export_directory inside the data dir refuses start (export-directory-invalid), for copy and litestream alike", () => {
    const outside = join(dir, "backups")
    mkdirSync(outside, { mode: 0o700 })
    const inside = join(dir, "data", "exports")
    const deadman_url = "https://deadman.example/ping"
    for (const backup of [
      { kind: "copy", directory: outside, export_directory: inside, deadman_url },
      { kind: "litestream", target: "s3://bucket/groundnote", prefix: "gn", export_directory: inside, deadman_url }
    ]) {
      const r = check(backup)
      if (Either.isRight(r)) throw new Error("expected a refusal")
      expect(r.left.code).toBe("export-directory-invalid")
      expect(r.left.message).toContain("inside the data dir")
    }
  })
  it("an export_directory outside the data dir passes (missing is the probe's business)", () => {
    const outside = join(dir, "backups")
    mkdirSync(outside, { mode: 0o700 })
    const r = check({ kind: "copy", directory: outside, export_directory: join(dir, "exports"), deadman_url: "https://deadman.example/ping" })
    expect(Either.isRight(r)).toBe(true)
  })
})
