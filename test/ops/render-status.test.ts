/** groundnote status, as a person reads it: stage b's model and catch-up, stage c's month. */
import { describe, expect, it } from "vitest"
import { renderStatus } from "../../src/ops/cli-ops-render.js"

const sales = { scope: "sales", created: true, locked: false, lock_reason: null as string | null, version_count: 12 as number | null, last_backup_at: null, verified_at: null, verify_ok: null, probed_at: null, probe_ok: null, exported_at: null, export_sha256: null }
const base = {
  instance: "acme", version: "0.1.0", started_at: "2026-12-01T08:00:00.000Z", now: "2026-12-01T09:00:00.000Z", data_dir: "/srv/gn",
  backup: { kind: "copy", directory: "/backup", export_directory: null, running: null, ops_backup_at: null, last_run: null, last_probe: null },
  scopes: [sales]
}

describe("renderStatus", () => {
  it("shows stage b's model and how far each scope's vectors are", () => {
    const text = renderStatus({
      ...base,
      semantic: { model: "bge-m3", state: "ready", reason: null, scopes: [{ scope: "sales", state: "catching-up", total: 12, embedded: 9, pending: 3 }] },
      usage: { reranker_month_usd: 1.5 }
    })
    expect(text).toContain("stage b: model bge-m3 ready")
    expect(text).toContain("  sales: 9 of 12 rule versions embedded, 3 pending (catching-up)")
    expect(text).toContain("stage c: 1.50 USD spent this month")
  })
  it("a spend below a cent shows its figure, not 0.00", () => {
    expect(renderStatus({ ...base, semantic: null, usage: { reranker_month_usd: 0.000724 } })).toContain("stage c: 0.00072 USD spent this month")
  })
  it("a lost file is LOCKED with its reason, a scope never created says how to create it", () => {
    const text = renderStatus({
      ...base,
      scopes: [
        { ...sales, created: false, locked: true, lock_reason: "file missing: ops.sqlite remembers 12 rule versions; restore the file (groundnote restore, docs/backup.md)" },
        { ...sales, scope: "hr", created: false, version_count: null }
      ]
    })
    expect(text).toContain("  sales: LOCKED (file missing: ops.sqlite remembers 12 rule versions; restore the file (groundnote restore, docs/backup.md)), 12 rule versions remembered;")
    expect(text).not.toContain("scope create sales")
    expect(text).toContain("  hr: no file yet (groundnote scope create hr)")
  })
  it("a scope the catch-up has not counted yet (its figures null on /ops/status) says so instead of null of null", () => {
    const text = renderStatus({
      ...base,
      semantic: { model: "bge-m3", state: "loading", reason: null, scopes: [{ scope: "sales", state: "waiting", total: null, embedded: null, pending: null }] }
    })
    expect(text).toContain("  sales: rule versions not counted yet (waiting)")
    expect(text).not.toContain("null")
  })
  it("one of a thing is singular: 1 rule version remembered, 0 of 1 rule version embedded", () => {
    const text = renderStatus({
      ...base,
      scopes: [{ ...sales, version_count: 1 }],
      semantic: { model: "bge-m3", state: "ready", reason: null, scopes: [{ scope: "sales", state: "catching-up", total: 1, embedded: 0, pending: 1 }] }
    })
    expect(text).toContain("  sales: ok, 1 rule version remembered;")
    expect(text).toContain("  sales: 0 of 1 rule version embedded, 1 pending (catching-up)")
  })

  it("says nothing of stage b when it is off, nor of stage c without spend", () => {
    const text = renderStatus({ ...base, semantic: null, usage: { reranker_month_usd: 0 } })
    expect(text).not.toContain("stage b")
    expect(text).not.toContain("stage c")
  })
})
