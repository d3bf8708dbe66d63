/**
 * Doctor stays as thin as the CLI that will run it: AT6 (test/arch) forbids the approval,
 * decision, server and writer modules; beyond that its static closure holds no store and no
 * config loader, so the CLI can import it and still pass its own thin-client test.
 */
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { buildSourceGraph, checkAT6, importClosure } from "../../arch/source-graph.js"

const ROOT = fileURLToPath(new URL("../../..", import.meta.url))
const graph = buildSourceGraph(ROOT)
const seeds = [...graph.files.keys()].filter((f) => f.startsWith("src/ops/doctor/"))

describe("doctor's imports", () => {
  it("AT6 holds and the closure reaches no store, no config loader, no listener", () => {
    expect(seeds).toEqual(expect.arrayContaining(["src/ops/doctor/findings.ts", "src/ops/doctor/facts.ts", "src/ops/doctor/index.ts"]))
    expect(checkAT6(graph)).toEqual([])
    const closure = [...importClosure(graph, seeds, { dynamic: false }).keys()].sort()
    expect(closure.filter((f) => f.startsWith("src/db/") || f.startsWith("src/config/") || f === "src/ops/listener.ts" || f === "src/main.ts")).toEqual([])
  })
})
