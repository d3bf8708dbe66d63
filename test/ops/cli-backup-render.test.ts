/** The human report of backup run (src/ops/cli-backup.ts renderRun): copies with their size, a Litestream reseed with what it did. */
import { describe, expect, it } from "vitest"
import type { RunAnswer } from "../../src/backup/schemas.js"
import { renderRun } from "../../src/ops/cli-backup.js"

const at = { started_at: "2026-12-06T03:15:00.000Z", finished_at: "2026-12-06T03:15:09.000Z" }

describe("backup run report", () => {
  it("a copy names its size and file", () => {
    const a: RunAnswer = { ok: true, kind: "copy", ran: true, ...at, ops: { ok: true, file: "/b/ops.sqlite", bytes: 2048 }, scopes: [{ scope: "sales", ok: true, file: "/b/scopes/sales.sqlite", bytes: 4096 }] }
    expect(renderRun(a)).toBe([
      "backup run (copy), 2026-12-06T03:15:00.000Z to 2026-12-06T03:15:09.000Z: ok",
      "  ops.sqlite: ok, 2.0 kB to /b/ops.sqlite",
      "  sales: ok, 4.0 kB to /b/scopes/sales.sqlite"
    ].join("\n"))
  })

  it("a Litestream reseed names the replica and what was done; a failed one why", () => {
    const a: RunAnswer = {
      ok: false, kind: "litestream", ran: true, ...at, message: "Litestream replicates continuously; nothing to copy", ops: null,
      scopes: [
        { scope: "sales", ok: true, file: "file:///r/gn/scopes/sales", bytes: null, detail: "reseed: new generation 0123456789abcdef verified; 1 older generation deleted" },
        { scope: "support", ok: false, file: "file:///r/gn/scopes/support", bytes: null, detail: "reseed: Litestream started no new generation within 120 s (is it running?); nothing was deleted" }
      ]
    }
    expect(renderRun(a)).toBe([
      "backup run (litestream), 2026-12-06T03:15:00.000Z to 2026-12-06T03:15:09.000Z: FAILED",
      "  sales: ok, reseed: new generation 0123456789abcdef verified; 1 older generation deleted (file:///r/gn/scopes/sales)",
      "  support: FAILED: reseed: Litestream started no new generation within 120 s (is it running?); nothing was deleted"
    ].join("\n"))
  })
})
