import { appendFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { defineConfig } from "vitest/config"

/** Every console line of the suite goes here too; test/global-setup.ts scans it for secrets at the end. */
const suiteLog = join(tmpdir(), `groundnote-suite-log-${process.pid}.txt`)
process.env.GROUNDNOTE_SUITE_LOG = suiteLog

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    onConsoleLog(log) {
      appendFileSync(suiteLog, log.endsWith("\n") ? log : `${log}\n`)
    }
  }
})
