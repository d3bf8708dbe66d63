/**
 * The CLI is a thin client (architecture.md §2 AT6, §11): beyond what test/arch checks, the
 * static import closure of src/ops/cli*.ts and ops-client.ts holds no store (src/db/**), no
 * config loader and not the ops listener (restore, groundnote.json and the stage findings come
 * through the one dynamic import of ../main.js: cli-host.ts); its route table is the only place
 * that names a path; and its socket name matches the service's.
 */
import fs from "node:fs"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { OPS_SOCKET_NAME } from "../../src/config/data-dir.js"
import { buildPath, CLI_ROUTES, pathParams } from "../../src/ops/cli-routes.js"
import { OPS_SOCKET_FILE } from "../../src/ops/ops-client.js"
import { APPROVAL_ROUTE, buildSourceGraph, checkAT6, checkAT6Routes, importClosure } from "../arch/source-graph.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const graph = buildSourceGraph(ROOT)
const seeds = [...graph.files.keys()].filter((f) => /^src\/ops\/cli[^/]*\.ts$/.test(f))

describe("the CLI stays a thin client", () => {
  it("AT6 holds", () => {
    expect(seeds).toEqual(expect.arrayContaining([
      "src/ops/cli.ts", "src/ops/cli-commands.ts", "src/ops/cli-routes.ts", "src/ops/cli-backup.ts", "src/ops/cli-api-commands.ts",
      "src/ops/cli-api.ts", "src/ops/cli-credentials.ts", "src/ops/cli-config.ts", "src/ops/cli-help.ts", "src/ops/cli-host.ts", "src/ops/cli-output.ts"
    ]))
    expect(checkAT6(graph)).toEqual([])
    expect(checkAT6Routes(graph)).toEqual([])
  })

  it("reaches no store, no config loader and not the listener (type imports included)", () => {
    const closure = [...importClosure(graph, seeds, { dynamic: false }).keys()].sort()
    expect(closure).toContain("src/ops/ops-client.ts")
    // the server's own request schemas are there (client-side validation), restore and its migrations are not
    expect(closure).toEqual(expect.arrayContaining(["src/domain/source-schemas.ts", "src/domain/proposal-schemas.ts", "src/domain/search-schemas.ts", "src/domain/rule-schemas.ts"]))
    expect(closure.filter((f) => f === "src/backup/restore.ts" || f.startsWith("src/operations/"))).toEqual([])
    const bad = closure.filter((f) =>
      f.startsWith("src/db/") || f.startsWith("src/config/") || f === "src/ops/listener.ts" || f === "src/main.ts" || f === "src/demo.ts"
    )
    expect(bad).toEqual([])
  })

  it("builds requests only from the route table (no path literal elsewhere in the CLI)", () => {
    for (const file of seeds.filter((f) => f !== "src/ops/cli-routes.ts").concat("src/ops/ops-client.ts")) {
      const text = fs.readFileSync(path.join(ROOT, file), "utf8")
      expect(text, file).not.toMatch(/["'`]\/(?:ops|v1|approval|mcp)\b/)
    }
  })

  it("the route table: ops routes on the socket, /v1 routes of the api channel, of the approval channel only the export", () => {
    for (const r of Object.values(CLI_ROUTES)) {
      expect(r.path).toMatch(r.channel === "ops" ? /^\/ops\// : /^\/v1\//)
      expect(APPROVAL_ROUTE.test(r.path)).toBe(false)
      expect(r.description.length).toBeGreaterThan(0)
      // nothing that confirms, rejects, revokes, reviews, archives, reverts or redacts
      expect(r.path).not.toMatch(/decision|reviews|archive|revert|redact|confirm|reject|revoke/)
    }
    expect(Object.values(CLI_ROUTES).filter((r) => r.channel === "approval").map((r) => `${r.method} ${r.path}`)).toEqual(["GET /v1/export/:scope"])
    expect(pathParams(CLI_ROUTES.grantsRename.path)).toEqual(["id"])
    expect(buildPath(CLI_ROUTES.grantsDisable, { id: "service:3/../x" })).toBe("/ops/grants/service%3A3%2F..%2Fx/disable")
    expect(() => buildPath(CLI_ROUTES.grantsDisable)).toThrow(/needs :id/)
    expect(() => buildPath(CLI_ROUTES.opsStatus, { id: "x" })).toThrow(/no parameter id/)
    expect(buildPath(CLI_ROUTES.rulesList, {}, { scope: "sales", status: undefined, limit: "5" })).toBe("/v1/rules?scope=sales&limit=5")
    expect(buildPath(CLI_ROUTES.sourcesGet, { id: "mail:<a@b>" }, { scope: "sales" })).toBe("/v1/sources/mail%3A%3Ca%40b%3E?scope=sales")
    expect(() => buildPath(CLI_ROUTES.rulesVersions, { id: "sales-0001" }, { as_of: "2026-01-01" })).toThrow(/no query parameter as_of/)
  })

  it("looks for the socket the service creates", () => {
    expect(OPS_SOCKET_FILE).toBe(OPS_SOCKET_NAME)
  })
})
