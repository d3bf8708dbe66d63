/**
 * Architecture tests AT1–AT6 (architecture.md §1 invariant 2, §2 "Module layout"; graph.md §13).
 *
 * Every rule is a function in ./source-graph.ts that returns violations. The first block runs the
 * rules on the real src/ tree; rules over files that do not exist yet pass, so each block also
 * asserts what the scanner must have found once the relevant file exists ("known present").
 * The second block runs each rule on small fixtures written to a temp dir, so a rule that stops
 * seeing violations fails there instead of passing blind.
 */
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import {
  buildSourceGraph,
  buildSourceGraphFromTexts,
  checkAT1,
  checkAT1b,
  checkAT2,
  checkAT2b,
  checkAT2c,
  checkAT2d,
  checkAT3,
  checkAT4,
  checkAT5,
  checkAT6,
  checkAT6Routes,
  checkAdapters,
  checkRedaction,
  checkLayers,
  folderEdges,
  isAdapter,
  filesWithString,
  formatViolation,
  importClosure,
  insertInto,
  listSourceFiles,
  mcpRegistrations,
  normalizeSql,
  REDACTION_OPERATION,
  REJECTED_FTS,
  writesTo
} from "./source-graph.js"
import type { SourceGraph, Violation } from "./source-graph.js"
import { JSONSchema } from "effect"
import { ProposalDraft, ProposalRequest } from "../../src/domain/proposal-schemas.js"
import { Api } from "../../src/http/api.js"
import { propose } from "../../src/operations/proposals.js"
import { PROMPT_NAMES } from "../../src/mcp/prompts.js"
import { MCP_TOOLS } from "../../src/mcp/server.js"
import { proposeRule } from "../../src/mcp/tools/propose-rule.js"
import { CHANNEL_RIGHTS } from "../../src/auth/scope-check.js"
import { createRedactionOp, previewRedactionOp } from "../../src/operations/redactions.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const exists = (rel: string): boolean => fs.existsSync(path.join(ROOT, rel))
const graph: SourceGraph = buildSourceGraph(ROOT)
const readRoot = (file: string): string => fs.readFileSync(path.join(ROOT, file), "utf8")

const expectNone = (violations: ReadonlyArray<Violation>): void => {
  expect(violations.map(formatViolation)).toEqual([])
}

describe("architecture (src/)", () => {
  it("scanner sees the source tree", () => {
    const listed = listSourceFiles(ROOT)
    expect(listed.length).toBeGreaterThan(0)
    expect(graph.files.size).toBe(listed.length)
    // relative imports resolve to files that exist (.js → .ts mapping works)
    const edges = [...graph.files.values()].flatMap((f) => f.imports)
    expect(edges.length).toBeGreaterThan(0)
    expect(edges.some((e) => e.target !== null && graph.files.has(e.target))).toBe(true)
    // strings are collected
    expect([...graph.files.values()].some((f) => f.strings.length > 0)).toBe(true)
  })

  it("AT1: the import closure of src/mcp/** holds no src/decision/** outside policy/ and no src/structure/**", () => {
    expectNone(checkAT1(graph))
    const mcp = [...graph.files.keys()].filter((f) => f.startsWith("src/mcp/"))
    if (mcp.length > 1) {
      // the closure is computed over real edges, not just the seeds
      expect(importClosure(graph, mcp).size).toBeGreaterThan(mcp.length)
    }
    // known present: the tools reach the shared pipeline, intake, the proposal writer and the policy's retract, never decide()
    if (exists("src/mcp/tools/propose-rule.ts")) {
      const closure = importClosure(graph, mcp)
      expect(closure.has("src/auth/scope-check.ts")).toBe(true)
      expect(closure.has("src/domain/intake.ts")).toBe(true)
      expect(closure.has("src/domain/proposals.ts")).toBe(true)
      expect(closure.has("src/decision/decide.ts")).toBe(false)
    }
    if (exists("src/mcp/tools/rule-retract.ts")) {
      expect(importClosure(graph, mcp).has("src/decision/policy/retract.ts")).toBe(true)
    }
  })

  it("AT1b: the import closure of src/decision/policy/** does not hold src/decision/decide.ts", () => {
    expectNone(checkAT1b(graph))
    // known present: the closure is real (the policy reaches the domain it writes through)
    const policy = [...graph.files.keys()].filter((f) => f.startsWith("src/decision/policy/"))
    if (policy.includes("src/decision/policy/adopt.ts")) {
      const closure = importClosure(graph, policy)
      expect(closure.has("src/db/fts.ts")).toBe(true)
      expect(closure.has("src/decision/decide.ts")).toBe(false)
    }
  })

  it("AT2c: the policy is imported only by services.ts, the retract operation and the approval pages; adopt() only by the policy's verdict", () => {
    expectNone(checkAT2c(graph))
    if (exists("src/decision/policy/live.ts")) {
      const targets = (f: string) => graph.files.get(f)?.imports.map((e) => e.target ?? "") ?? []
      expect(targets("src/decision/policy/live.ts")).toContain("src/decision/policy/adopt.ts")
      expect(targets("src/services.ts")).toContain("src/decision/policy/live.ts")
      expect(targets("src/operations/retract.ts")).toContain("src/decision/policy/retract.ts")
    }
  })

  it("AT2d: every proposal passes intake(): the proposal writer is imported only by src/domain/intake.ts", () => {
    expectNone(checkAT2d(graph))
    if (exists("src/domain/intake.ts")) {
      const targets = graph.files.get("src/domain/intake.ts")?.imports.map((e) => e.target ?? "") ?? []
      expect(targets).toContain("src/domain/proposals.ts")
      expect(targets).toContain("src/domain/approval-policy.ts")
      const doors = ["src/operations/proposals.ts"].map((f) => graph.files.get(f)?.imports.map((e) => e.target ?? "") ?? [])
      for (const t of doors) expect(t).toContain("src/domain/intake.ts")
    }
  })

  it("AT2: src/decision/** outside policy/ is imported only by src/http/routes/decision.ts, src/approval/** and itself", () => {
    expectNone(checkAT2(graph))
  })

  it("AT2b: src/structure/** is imported only by src/http/routes/structure.ts, src/approval/** and itself", () => {
    expectNone(checkAT2b(graph))
    // known present: the structure routes reach src/structure/** (the rule sees real edges)
    if (exists("src/http/routes/structure.ts")) {
      const targets = graph.files.get("src/http/routes/structure.ts")?.imports.map((e) => e.target ?? "") ?? []
      expect(targets.some((t) => t.startsWith("src/structure/"))).toBe(true)
    }
  })

  it("AT3: rule_version, decision, rejected_fts and the graph tables are written only by their writers", () => {
    expectNone(checkAT3(graph))
    // known present: once a writer exists, the scanner must see its statement there
    const present: ReadonlyArray<readonly [string, RegExp]> = [
      ["src/domain/proposals.ts", insertInto("rule_version")],
      ["src/decision/decide.ts", insertInto("rule_version")],
      ["src/decision/decide.ts", insertInto("decision")],
      ["src/decision/decide.ts", REJECTED_FTS],
      ["src/graph/entities.ts", insertInto("entity")],
      ["src/graph/entities.ts", insertInto("entity_version")],
      ["src/graph/links.ts", insertInto("link")],
      ["src/structure/review.ts", insertInto("review")],
      ["src/structure/review.ts", insertInto("entity_version")]
    ]
    for (const [file, pattern] of present) {
      if (exists(file)) expect(filesWithString(graph, pattern), `${pattern} in ${file}`).toContain(file)
    }
    // adopt() and retract() may share one decision writer, so one of the two must hold it
    const policyWriters = ["src/decision/policy/adopt.ts", "src/decision/policy/retract.ts"]
    if (policyWriters.some(exists)) {
      expect(filesWithString(graph, insertInto("decision")).some((f) => policyWriters.includes(f))).toBe(true)
    }
    // known present (AT3 after slice A): each policy entrance writes its version and its decision
    for (const file of policyWriters.filter(exists)) {
      expect(filesWithString(graph, insertInto("rule_version")), file).toContain(file)
      expect(filesWithString(graph, insertInto("decision")), file).toContain(file)
    }
    // the policy's inserts name it: adopt writes 'confirmed' with origin 'auto', retract 'superseded' with origin 'grant'
    const policyInserts = (file: string, table: string): Array<string> =>
      (graph.files.get(file)?.strings ?? []).map((e) => normalizeSql(e.text)).filter((t) => insertInto(table).test(t))
    if (exists("src/decision/policy/adopt.ts")) {
      expect(policyInserts("src/decision/policy/adopt.ts", "rule_version").every((t) => t.includes("'confirmed'"))).toBe(true)
      expect(policyInserts("src/decision/policy/adopt.ts", "decision").every((t) => t.includes("'auto'"))).toBe(true)
    }
    if (exists("src/decision/policy/retract.ts")) {
      expect(policyInserts("src/decision/policy/retract.ts", "rule_version").every((t) => t.includes("'superseded'"))).toBe(true)
      expect(policyInserts("src/decision/policy/retract.ts", "decision").every((t) => t.includes("'retract'"))).toBe(true)
    }
    if ([...graph.files.keys()].some((f) => f.startsWith("src/structure/"))) {
      expect(filesWithString(graph, insertInto("review")).some((f) => f.startsWith("src/structure/"))).toBe(true)
    }
    // graph.md §13: the create insert carries the literal 'unconfirmed' and agents never write a person's
    // version; person versions (src/structure/**) carry 'approval'; links are inserted as 'proposed', 'deterministic' or a person's 'human'
    const inserts = (file: string, table: string): Array<string> =>
      (graph.files.get(file)?.strings ?? []).map((e) => normalizeSql(e.text)).filter((t) => insertInto(table).test(t))
    if (exists("src/graph/entities.ts")) {
      const own = inserts("src/graph/entities.ts", "entity_version")
      expect(own.some((t) => t.includes("'create'") && t.includes("'unconfirmed'"))).toBe(true)
      for (const t of own) expect(t).not.toMatch(/'(?:approval|confirm|revert|archive|active)'/)
    }
    for (const file of [...graph.files.keys()].filter((f) => f.startsWith("src/structure/"))) {
      for (const t of inserts(file, "entity_version")) expect(t, file).toContain("'approval'")
    }
    if (exists("src/graph/links.ts")) {
      const own = inserts("src/graph/links.ts", "link")
      expect(own.length).toBeGreaterThan(0)
      // 'human': a person's link, born confirmed on the approval channel (gaps.md §13); its writer
      // createPersonLink is reached only from src/structure/** (AT2b keeps that off agents' paths)
      for (const t of own) expect(t).toMatch(/'(?:proposed|deterministic|human)'/)
    }
  })

  it("AT4: no MCP tool or prompt name matches /confirm|reject|revoke|review|decide|approve|archive|revert|redact|erase/", () => {
    expectNone(checkAT4(graph))
    for (const file of ["src/mcp/server.ts", "src/mcp/prompts.ts"]) {
      const info = graph.files.get(file)
      if (info !== undefined && /\.(?:registerTool|tool|registerPrompt|prompt)\s*\(/.test(fs.readFileSync(path.join(ROOT, file), "utf8"))) {
        expect(mcpRegistrations(graph).some((r) => r.file === file), `registrations in ${file}`).toBe(true)
      }
    }
    // known present: the scanner sees every tool and prompt name the server lists (tools/list, prompts/list),
    // as a registration's literal or as the `name: "…"` of a tool spec that AT4 falls back to
    if (exists("src/mcp/server.ts")) {
      const specNames = [...graph.files.values()].filter((f) => f.path.startsWith("src/mcp/")).flatMap((f) => f.nameProperties.map((p) => p.text))
      const names = [...mcpRegistrations(graph).flatMap((r) => r.names ?? []), ...specNames]
      for (const name of [...MCP_TOOLS, ...PROMPT_NAMES]) expect(names, name).toContain(name)
      expect([...MCP_TOOLS, ...PROMPT_NAMES].filter((n) => /confirm|reject|revoke|review|decide|approve|archive|revert|redact|erase/.test(n))).toEqual([])
    }
  })

  it("AT5: entity_closure / entity_fts are written only by src/graph/closure.ts / src/graph/fts.ts and migrations", () => {
    expectNone(checkAT5(graph))
    if (exists("src/graph/closure.ts")) {
      expect(filesWithString(graph, writesTo("entity_closure"))).toContain("src/graph/closure.ts")
    }
    if (exists("src/graph/fts.ts")) {
      expect(filesWithString(graph, writesTo("entity_fts"))).toContain("src/graph/fts.ts")
    }
  })

  it("AT6: the CLI and doctor reach no approval, decision, server or writer module; dynamic imports only of main.js and CLI modules, in cli.ts", () => {
    expectNone(checkAT6(graph))
  })

  it("AT6: the CLI route table holds no approval-channel route except GET /v1/export/:scope", () => {
    expectNone(checkAT6Routes(graph))
  })

  it("redaction (AT4/AT6 extended to redact): no MCP tool, ops route, CLI command or service route reaches the person's redaction; only the approval channel grants redact", () => {
    expectNone(checkRedaction(graph, readRoot))
    expect(CHANNEL_RIGHTS.approval).toContain("redact")
    expect(CHANNEL_RIGHTS.api).not.toContain("redact")
    expect(CHANNEL_RIGHTS.mcp).not.toContain("redact")
    expect([...MCP_TOOLS, ...PROMPT_NAMES].filter((n) => /redact|erase/i.test(n))).toEqual([])
    // known present: the route and the pages reach the operation, the operation the core's entrances
    if (exists(REDACTION_OPERATION)) {
      const targets = (f: string) => graph.files.get(f)?.imports.map((e) => e.target ?? "") ?? []
      expect(targets("src/http/routes/redactions.ts")).toContain(REDACTION_OPERATION)
      expect(targets("src/approval/redactions-form.ts")).toContain(REDACTION_OPERATION)
      expect(targets(REDACTION_OPERATION)).toEqual(expect.arrayContaining(["src/redaction/apply-thread.ts", "src/redaction/preview.ts"]))
      expect(targets("src/redaction/apply-thread.ts")).toContain("src/redaction/apply.ts")
      expect([createRedactionOp.right, previewRedactionOp.right]).toEqual(["redact", "redact"])
      expect(importClosure(graph, [...graph.files.keys()].filter((f) => f.startsWith("src/mcp/"))).has(REDACTION_OPERATION)).toBe(false)
    }
  })

  it("layers: no import cycle between the top-level folders of src/ (runtime imports, static and dynamic)", () => {
    expectNone(checkLayers(graph))
    // known present: the layers the design card names, in their direction
    const edges = folderEdges(graph)
    expect(edges.get("http")?.has("operations")).toBe(true)
    expect(edges.get("mcp")?.has("operations")).toBe(true)
    expect(edges.get("operations")?.has("auth")).toBe(true)
    expect(edges.get("auth")?.has("transport")).toBe(true)
    expect(edges.get("domain")?.has("contracts")).toBe(true)
    expect(edges.get("contracts")).toBeUndefined()
  })

  it("one proposal request for both doors: propose_rule's arguments and POST /v1/proposals' body are ProposalDraft, ProposalRequest with only its optional fields optional", () => {
    // one schema: the tool's arguments, the operation's input and the route's payload are the same object
    expect(proposeRule.args).toBe(ProposalDraft)
    expect(propose.input).toBe(ProposalDraft)
    const payload = Api.groups.proposals?.endpoints.propose?.payloadSchema
    expect(payload?._tag === "Some" ? payload.value : undefined).toBe(ProposalDraft)
    type Json = { properties?: Record<string, Json>; required?: Array<string>; anyOf?: Array<Json>; $defs?: Record<string, Json>; description?: string }
    const contract = JSONSchema.make(ProposalRequest) as unknown as Json
    const tool = JSONSchema.make(proposeRule.args) as unknown as Json
    const OPTIONAL = ["said_at", "speaker", "relations", "keywords", "valid_from", "supersedes"]
    // null asks for the default where the contract's field takes no null
    const NULL_IS_DEFAULT = ["said_at", "valid_from"]
    expect(Object.keys(tool.properties ?? {}).sort()).toEqual(Object.keys(contract.properties ?? {}).sort())
    expect([...(tool.required ?? [])].sort()).toEqual((contract.required ?? []).filter((k) => !OPTIONAL.includes(k)).sort())
    // every field keeps the contract's rules; the optional ones only gain a description of their default
    const bare = (j: Json | undefined): Json => {
      if (j === undefined) return {}
      const { description: _d, ...rest } = j
      return rest
    }
    for (const [key, schema] of Object.entries(contract.properties ?? {})) {
      if (key === "source") continue
      const expected = NULL_IS_DEFAULT.includes(key) ? { anyOf: [bare(schema), { type: "null" }] } : bare(schema)
      expect(bare(tool.properties?.[key]), key).toEqual(expected)
    }
    // source: the same three kinds, link optional in each
    const kinds = (j: Json | undefined) => (j?.anyOf ?? []).map((k) => ({ props: Object.keys(k.properties ?? {}).sort(), required: [...(k.required ?? [])].sort() }))
    expect(kinds(tool.properties?.source)).toEqual(kinds(contract.properties?.source).map((k) => ({ ...k, required: k.required.filter((r) => r !== "link") })))
    // the tool file itself holds no schema (the adapter rule), and its description names every field's format
    expect(readRoot("src/mcp/tools/propose-rule.ts")).not.toMatch(/Schema\.(?:Struct|String|Number|optional)/)
    for (const field of ["said_at", "valid_from", "speaker", "keywords", "relations", "supersedes", "timestamp_s", "quote", "YYYY-MM-DDTHH:MM:SSZ", "YYYY-MM-DD"]) {
      expect(proposeRule.description, field).toContain(field)
    }
  })

  it("routes and tools are thin adapters: no SQL and no schema of their own", () => {
    expectNone(checkAdapters(graph, readRoot))
    expect([...graph.files.keys()].filter(isAdapter).length).toBeGreaterThan(20)
  })
})

// -------------------------------------------------------------------------------------------------
// Self-tests: each rule reports a violating fixture and accepts a clean one.

const tmpDirs: Array<string> = []
afterAll(() => {
  for (const d of tmpDirs) fs.rmSync(d, { recursive: true, force: true })
})

/** Writes `files` (repo-relative) into a fresh temp dir and scans it from disk. */
const fixture = (files: Readonly<Record<string, string>>): SourceGraph => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "groundnote-arch-"))
  tmpDirs.push(dir)
  for (const [rel, text] of Object.entries(files)) {
    const abs = path.join(dir, rel)
    fs.mkdirSync(path.dirname(abs), { recursive: true })
    fs.writeFileSync(abs, text)
  }
  return buildSourceGraph(dir)
}

const rulesOf = (vs: ReadonlyArray<Violation>): Array<string> => vs.map((v) => `${v.rule} ${v.file}`)
const readIn = (g: SourceGraph) => (file: string): string => fs.readFileSync(path.join(g.root ?? ROOT, file), "utf8")

describe("scanner self-tests", () => {
  it("parses imports, exports, type imports, dynamic imports and strings", () => {
    const g = fixture({
      "src/a/x.ts": [
        `import { b } from "./b.js"`,
        `import type { C } from "../c/c.js"`,
        `export { d } from "../d/index.js"`,
        `export * from "./e.js"`,
        `import { Schema } from "effect"`,
        `type T = typeof import("./t.js")`,
        `const m = await import("../m.js")`,
        `const n = await import(someName)`,
        `const q = sql\`INSERT INTO \${sql("rule_version")} VALUES (\${x}, 'proposed')\``,
        `const r = "INSERT INTO " + "decision" + tail`,
        `// INSERT INTO link (comment, not a string)`
      ].join("\n"),
      "src/a/b.ts": `export const b = 1\n`,
      "src/a/e.mts": `export {}\n`,
      "src/notes.txt": `not a source file`
    })
    expect([...g.files.keys()].sort()).toEqual(["src/a/b.ts", "src/a/e.mts", "src/a/x.ts"])
    const x = g.files.get("src/a/x.ts")
    expect(x).toBeDefined()
    if (x === undefined) return
    expect(x.imports.map((e) => [e.target, e.kind, e.typeOnly])).toEqual([
      ["src/a/b.ts", "import", false],
      ["src/c/c.ts", "import", true],
      ["src/d/index.ts", "export", false],
      ["src/a/e.ts", "export", false],
      ["src/a/t.ts", "import-type", true]
    ])
    expect(x.dynamicImports.map((e) => [e.specifier, e.target])).toEqual([["../m.js", "src/m.ts"], [null, null]])
    const texts = x.strings.map((s) => s.text)
    expect(texts).toContain("INSERT INTO rule_version VALUES (${…}, 'proposed')")
    expect(texts).toContain("INSERT INTO decision${…}")
    expect(texts.some((t) => t.includes("INSERT INTO link"))).toBe(false)
    expect(filesWithString(g, insertInto("rule_version"))).toEqual(["src/a/x.ts"])
  })

  it("computes the transitive closure with the import chain", () => {
    const g = buildSourceGraphFromTexts({
      "src/a.ts": `import "./b.js"`,
      "src/b.ts": `import type { X } from "./c.js"`,
      "src/c.ts": `const d = () => import("./d.js")`,
      "src/d.ts": `export {}`,
      "src/e.ts": `import "./a.js"`
    })
    expect([...importClosure(g, ["src/a.ts"]).keys()].sort()).toEqual(["src/a.ts", "src/b.ts", "src/c.ts", "src/d.ts"])
    expect([...importClosure(g, ["src/a.ts"], { dynamic: false }).keys()].sort()).toEqual(["src/a.ts", "src/b.ts", "src/c.ts"])
    expect([...importClosure(g, ["src/a.ts"], { typeOnly: false }).keys()].sort()).toEqual(["src/a.ts", "src/b.ts"])
  })

  it("AT1 reports src/mcp reaching decide.ts or src/structure transitively, not policy/", () => {
    const bad = fixture({
      "src/mcp/server.ts": `import { search } from "../search/search.js"\nimport { propose } from "../decision/policy/propose.js"`,
      "src/search/search.ts": `import { decide } from "../decision/decide.js"\nimport type { R } from "../structure/review.js"`,
      "src/decision/decide.ts": `export const decide = 1`,
      "src/decision/policy/propose.ts": `export const propose = 1`,
      "src/structure/review.ts": `export type R = 1`
    })
    const vs = checkAT1(bad)
    expect(vs.map((v) => v.message.split(":")[0])).toEqual(["reaches src/decision/decide.ts", "reaches src/structure/review.ts"])
    expect(vs[0]?.message).toContain("src/mcp/server.ts → src/search/search.ts → src/decision/decide.ts")
    expect(checkAT1(fixture({
      "src/mcp/server.ts": `import { propose } from "../decision/policy/propose.js"`,
      "src/decision/policy/propose.ts": `export const propose = 1`
    }))).toEqual([])
  })

  it("AT1b reports policy/** reaching decide.ts", () => {
    const g = buildSourceGraphFromTexts({
      "src/decision/policy/adopt.ts": `import { h } from "../../domain/h.js"`,
      "src/domain/h.ts": `export { decide } from "../decision/decide.js"`,
      "src/decision/decide.ts": `export const decide = 1`
    })
    expect(rulesOf(checkAT1b(g))).toEqual(["AT1b src/domain/h.ts"])
  })

  it("AT2 reports importers of src/decision/** outside the allowed ones, statically or dynamically", () => {
    const g = fixture({
      "src/decision/decide.ts": `import { x } from "./util.js"\nexport const decide = x`,
      "src/decision/util.ts": `export const x = 1`,
      "src/decision/policy/adopt.ts": `import type { T } from "../util.js"`,
      "src/http/routes/decision.ts": `import { decide } from "../../decision/decide.js"`,
      "src/http/routes/rules.ts": `const m = await import("../../decision/decide.js")`,
      "src/approval/rules.ts": `import { decide } from "../decision/decide.js"`,
      "src/main.ts": `import { decide } from "./decision/decide.js"`,
      "src/domain/intake.ts": `import { adopt } from "../decision/policy/adopt.js"`
    })
    expect(rulesOf(checkAT2(g)).sort()).toEqual([
      "AT2 src/decision/policy/adopt.ts",
      "AT2 src/http/routes/rules.ts",
      "AT2 src/main.ts"
    ])
  })

  it("AT2c reports importers of the policy outside services.ts, the retract operation and the approval pages", () => {
    const g = buildSourceGraphFromTexts({
      "src/decision/policy/live.ts": `import { adopt } from "./adopt.js"`,
      "src/decision/policy/adopt.ts": `export const adopt = 1`,
      "src/decision/policy/retract.ts": `export const retract = 1`,
      "src/decision/policy/classify.ts": `export const classify = 1`,
      "src/services.ts": `import { L } from "./decision/policy/live.js"`,
      "src/operations/retract.ts": `import { retract } from "../decision/policy/retract.js"`,
      "src/approval/rule-page.ts": `import { classify } from "../decision/policy/classify.js"`,
      // violations
      "src/domain/intake.ts": `import { adopt } from "../decision/policy/adopt.js"`,
      "src/mcp/tools/rule-retract.ts": `import { retract } from "../../decision/policy/retract.js"`,
      "src/operations/proposals.ts": `import type { C } from "../decision/policy/classify.js"`
    })
    expect(rulesOf(checkAT2c(g)).sort()).toEqual([
      "AT2c src/domain/intake.ts",
      "AT2c src/domain/intake.ts",
      "AT2c src/mcp/tools/rule-retract.ts",
      "AT2c src/mcp/tools/rule-retract.ts",
      "AT2c src/operations/proposals.ts"
    ])
  })

  it("AT2d reports importers of the proposal writer other than intake", () => {
    const g = buildSourceGraphFromTexts({
      "src/domain/proposals.ts": `export const propose = 1`,
      "src/domain/approval-policy.ts": `export class ApprovalPolicy {}`,
      "src/domain/intake.ts": `import { propose } from "./proposals.js"\nimport { ApprovalPolicy } from "./approval-policy.js"`,
      "src/decision/policy/live.ts": `import { ApprovalPolicy } from "../../domain/approval-policy.js"`,
      // violations
      "src/operations/proposals.ts": `import { propose } from "../domain/proposals.js"`,
      "src/demo.ts": `import { propose } from "./domain/proposals.js"`,
      "src/http/routes/proposals.ts": `import { ApprovalPolicy } from "../../domain/approval-policy.js"`
    })
    expect(rulesOf(checkAT2d(g)).sort()).toEqual(["AT2d src/demo.ts", "AT2d src/http/routes/proposals.ts", "AT2d src/operations/proposals.ts"])
  })

  it("AT2b reports importers of src/structure/** outside the allowed ones", () => {
    const g = buildSourceGraphFromTexts({
      "src/structure/review.ts": `import { a } from "./archive.js"`,
      "src/structure/archive.ts": `export const a = 1`,
      "src/http/routes/structure.ts": `import "../../structure/review.js"`,
      "src/approval/structure.ts": `import "../structure/review.js"`,
      "src/graph/entities.ts": `import type { A } from "../structure/archive.js"`,
      "src/http/routes/entities.ts": `import "../../structure/archive.js"`
    })
    expect(rulesOf(checkAT2b(g)).sort()).toEqual(["AT2b src/graph/entities.ts", "AT2b src/http/routes/entities.ts"])
  })

  it("AT3 reports writes of rule_version, decision, rejected_fts and the graph tables outside their writers", () => {
    const g = fixture({
      // allowed
      "src/domain/proposals.ts": "const a = sql`INSERT INTO rule_version (rule_id, status) VALUES (${id}, 'proposed')`",
      "src/decision/decide.ts": [
        "const a = sql`INSERT INTO rule_version VALUES (${x})`",
        "const b = sql`INSERT INTO decision (rule_id) VALUES (${x})`",
        "const c = sql`INSERT INTO rejected_fts (rowid) VALUES (${x})`"
      ].join("\n"),
      "src/decision/policy/adopt.ts": "const a = sql`insert into decision (x) values (1)`",
      "src/search/rejected-similar.ts": `const q = "SELECT rowid FROM rejected_fts WHERE rejected_fts MATCH ?"`,
      "src/db/migrations/scope/0001-init.ts": `const s = ["INSERT INTO decision SELECT 1", "CREATE VIRTUAL TABLE rejected_fts USING fts5(x)"]`,
      "src/graph/entities.ts": `const a = "INSERT INTO entity (id) VALUES (?)"; const b = "INSERT INTO entity_version VALUES ('unconfirmed')"`,
      "src/graph/links.ts": `const a = "INSERT INTO link (origin) VALUES ('proposed')"`,
      "src/structure/review.ts": `const a = "INSERT INTO review VALUES (1)"; const b = "INSERT INTO entity_version VALUES (1)"`,
      "src/ops/log.ts": `const a = "INSERT INTO decision_log VALUES (1)"; const b = "INSERT INTO entity_closure VALUES (1)"; const c = "SELECT * FROM link"`,
      // violations
      "src/domain/proposals2.ts": "const a = `INSERT  INTO\n  rule_version VALUES (1)`",
      "src/domain/bad-proposal.ts": `const a = "Insert Or Replace Into \\"decision\\" VALUES (1)"`,
      "src/search/search.ts": `const a = "SELECT * FROM rejected_" + "fts"`,
      "src/graph/resolve.ts": `const a = "INSERT INTO main.entity (id) VALUES (?)"`,
      "src/graph/closure.ts": `const a = "INSERT INTO entity_version VALUES (1)"`,
      "src/mcp/tools/link.ts": `const a = "INSERT INTO link(id) VALUES (1)"`,
      "src/graph/links2.ts": "const a = `REPLACE INTO review VALUES (${x})`"
    })
    expect(rulesOf(checkAT3(g)).sort()).toEqual([
      "AT3 src/domain/bad-proposal.ts",
      "AT3 src/domain/proposals2.ts",
      "AT3 src/graph/closure.ts",
      "AT3 src/graph/links2.ts",
      "AT3 src/graph/resolve.ts",
      "AT3 src/mcp/tools/link.ts",
      "AT3 src/search/search.ts"
    ])
  })

  it("AT3 requires the literal 'proposed' in the rule_version insert of src/domain/proposals.ts", () => {
    const g = buildSourceGraphFromTexts({
      "src/domain/proposals.ts": "const a = sql`INSERT INTO rule_version VALUES (${id}, ${status})`"
    })
    const vs = checkAT3(g)
    expect(rulesOf(vs)).toEqual(["AT3 src/domain/proposals.ts"])
    expect(vs[0]?.message).toContain("'proposed'")
  })

  it("AT4 reports forbidden tool and prompt names, resolving same-file constants", () => {
    const g = fixture({
      "src/mcp/server.ts": [
        `const NAMES = { ok: "search_rules", bad: "approve_rule" } as const`,
        `const REVERT = "revert_entity"`,
        `server.registerTool("search_rules", {}, h)`,
        `server.registerTool("confirm_rule", {}, h)`,
        `server.tool(\`reject_rule\`, {}, h)`,
        `server.registerTool(NAMES.ok, {}, h)`,
        `server.registerTool(NAMES.bad, {}, h)`,
        `server.registerTool(REVERT, {}, h)`,
        `server.registerPrompt("where_does_this_belong", {}, h)`,
        `server.prompt("review_structure", {}, h)`,
        `server["registerTool"]("Decide_Now", {}, h)`,
        `const text = "never confirm, never archive"`
      ].join("\n"),
      "src/http/routes/decision.ts": `app.tool("confirm_rule")`
    })
    expect(checkAT4(g).map((v) => v.line)).toEqual([4, 5, 7, 8, 10, 11])
  })

  it("AT4 falls back to name literals for computed names, and fails when there is nothing to check", () => {
    const table = fixture({
      "src/mcp/tools/index.ts": `export const tools = [{ name: "list_scopes" }, { name: "archive_entity" }]`,
      "src/mcp/server.ts": `for (const t of tools) server.registerTool(t.name, t.config, t.handler)`
    })
    expect(rulesOf(checkAT4(table))).toEqual(["AT4 src/mcp/tools/index.ts"])
    const blind = fixture({ "src/mcp/server.ts": `for (const t of tools) server.registerTool(t.name, t.config, t.handler)` })
    expect(rulesOf(checkAT4(blind))).toEqual(["AT4 src/mcp/server.ts"])
  })

  it("AT5 reports writes to entity_closure / entity_fts outside their writers", () => {
    const g = fixture({
      "src/graph/closure.ts": `const a = "DELETE FROM entity_closure WHERE d = ?"; const b = "SELECT * FROM entity_fts"`,
      "src/graph/fts.ts": `const a = "INSERT INTO entity_fts(entity_fts, rowid) VALUES ('delete', ?)"`,
      "src/db/migrations/scope/0002-graph.ts": `const a = "INSERT INTO entity_closure SELECT 1"`,
      "src/search/x.ts": `const a = "SELECT * FROM entity_closure JOIN entity_fts"`,
      // violations
      "src/graph/entities.ts": "const a = sql`UPDATE  entity_closure SET d = ${d}`",
      "src/structure/archive.ts": `const a = "delete from\\n entity_fts where rowid = ?"`,
      "src/graph/move.ts": `const a = "INSERT OR REPLACE INTO entity_closure VALUES (1)"`,
      "src/graph/fts2.ts": `const a = "UPDATE OR IGNORE entity_fts SET x = 1"`
    })
    expect(rulesOf(checkAT5(g)).sort()).toEqual([
      "AT5 src/graph/entities.ts",
      "AT5 src/graph/fts2.ts",
      "AT5 src/graph/move.ts",
      "AT5 src/structure/archive.ts"
    ])
  })

  it("AT6 reports forbidden modules in the static closure of the CLI and doctor, and extra dynamic imports", () => {
    const g = fixture({
      "src/ops/cli.ts": `import { r } from "./cli-routes.js"\nconst main = await import("../main.js")`,
      "src/ops/cli-routes.ts": `import { x } from "../domain/schemas.js"`,
      "src/ops/doctor/index.ts": `import { e } from "../../export/build.js"`,
      "src/export/build.ts": `import { w } from "../graph/links.js"`,
      "src/graph/links.ts": `export const w = 1`,
      "src/domain/schemas.ts": `import type { G } from "../auth/jwt.js"`,
      "src/auth/jwt.ts": `export type G = 1`,
      "src/main.ts": `import "./mcp/server.js"`,
      "src/mcp/server.ts": `export {}`,
      "src/ops/listener.ts": `const h = await import("../http/api.js")`,
      "src/ops/cli-extra.ts": `const f = await import(name)\nconst g = await import("./cli-run.js")`,
      "src/ops/cli-lazy.ts": `import { s } from "../structure/state.js"`,
      "src/structure/state.ts": `export const s = 1`
    })
    expect(rulesOf(checkAT6(g)).sort()).toEqual([
      "AT6 src/domain/schemas.ts",
      "AT6 src/export/build.ts",
      "AT6 src/ops/cli-extra.ts",
      "AT6 src/ops/cli-extra.ts",
      "AT6 src/ops/cli-lazy.ts",
      "AT6 src/ops/listener.ts"
    ])
    // cli.ts loads a CLI module on demand; that module is held to the same closure
    expect(rulesOf(checkAT6(fixture({
      "src/ops/cli.ts": `const run = await import("./cli-run.js")\nconst x = await import("../ops/listener.js")`,
      "src/ops/cli-run.ts": `import "../approval/page.js"`,
      "src/approval/page.ts": `export {}`,
      "src/ops/listener.ts": `export {}`
    }))).sort()).toEqual(["AT6 src/ops/cli-run.ts", "AT6 src/ops/cli.ts"])
    expect(checkAT6(fixture({
      "src/ops/cli.ts": `import "./cli-routes.js"\nconst main = await import("../main.js")\nconst run = await import("./cli-run.js")`,
      "src/ops/cli-run.ts": `export {}`,
      "src/ops/cli-routes.ts": `export {}`,
      "src/main.ts": `import "./decision/decide.js"`,
      "src/decision/decide.ts": `export {}`
    }))).toEqual([])
  })

  it("AT6 reports approval-channel routes in the CLI route table, except the export", () => {
    const g = buildSourceGraphFromTexts({
      "src/ops/cli-routes.ts": [
        `export const routes = {`,
        `  export: { method: "GET", path: "/v1/export/:scope" },`,
        `  rules: { method: "GET", path: "/v1/rules/:id" },`,
        `  retract: { method: "POST", path: \`/v1/rules/\${id}/retract\` },`,
        `  decide: { method: "POST", path: \`/v1/rules/\${id}/decision\` },`,
        `  reviews: { method: "POST", path: "/v1/reviews" },`,
        `  archive: { method: "POST", path: "/v1/entities/:id/archive" },`,
        `  rejected: { method: "GET", path: "/v1/rejected" },`,
        `  login: { method: "POST", path: "/approval/login" },`,
        `}`
      ].join("\n")
    })
    expect(checkAT6Routes(g).map((v) => v.line)).toEqual([5, 6, 7, 8, 9])
  })

  it("REDACT reports a door reaching the person's redaction, other importers of the operation and the entrances, and a route on another channel", () => {
    const files = {
      "src/operations/redactions.ts": `import { previewRedaction } from "../redaction/preview.js"\nimport { applyRedaction } from "../redaction/apply.js"`,
      "src/redaction/preview.ts": `export const previewRedaction = 1`,
      "src/redaction/apply.ts": `import { x } from "./preview.js"\nexport const applyRedaction = 1\nexport const applyPlaces = 2`,
      "src/redaction/ledger.ts": `import { applyPlaces } from "./apply.js"`,
      "src/db/scope-store.ts": `import { l } from "../redaction/ledger.js"`,
      "src/http/routes/redactions.ts": `import { op } from "../../operations/redactions.js"\nserveRoute({ channel: "approval" })`,
      "src/approval/redactions-form.ts": `import { op } from "../operations/redactions.js"`,
      "src/mcp/server.ts": `import { s } from "../db/scope-store.js"`
    }
    // the replay of stored places, reached by every door through the scope store, is no violation
    expect(rulesOf(checkRedaction(fixture(files), readIn(fixture(files))))).toEqual([])
    const bad = {
      ...files,
      "src/mcp/tools/erase.ts": `import { f } from "../../approval/redactions-form.js"`,
      "src/http/ops-listener.ts": `import { op } from "../operations/redactions.js"`,
      "src/ops/cli-erase.ts": `import { r } from "../http/routes/redactions.js"`,
      "src/http/routes/rules.ts": `import { previewRedaction } from "../../redaction/preview.js"`,
      "src/operations/search.ts": `import { applyRedaction } from "../redaction/apply.js"`,
      "src/domain/h.ts": `export const h = (x: typeof import("../redaction/other.js")) => x.applyRedaction`,
      "src/http/routes/redactions.ts": `import { op } from "../../operations/redactions.js"\nserveRoute({ channel: "approval" })\nserveRoute({ channel: "api" })`
    }
    const g = fixture(bad)
    const found = checkRedaction(g, readIn(g))
    expect(rulesOf(found).sort()).toEqual([
      "REDACT src/domain/h.ts",
      "REDACT src/http/ops-listener.ts",
      "REDACT src/http/ops-listener.ts",
      "REDACT src/http/routes/redactions.ts",
      "REDACT src/http/routes/redactions.ts",
      "REDACT src/http/routes/rules.ts",
      "REDACT src/http/routes/rules.ts",
      "REDACT src/http/routes/rules.ts",
      "REDACT src/mcp/tools/erase.ts",
      "REDACT src/operations/search.ts",
      "REDACT src/operations/search.ts",
      "REDACT src/ops/cli-erase.ts"
    ])
    expect(found.filter((v) => v.file === "src/http/routes/redactions.ts").map((v) => v.message).join("\n")).toContain("serves the api channel")
  })

  it("LAYERS reports a cycle between top-level folders (also through a third folder and a dynamic import), not type-only imports", () => {
    const g = fixture({
      "src/a/x.ts": `import { y } from "../b/y.js"`,
      "src/b/y.ts": `import { z } from "../c/z.js"\nexport const y = 1`,
      "src/c/z.ts": `const a = await import("../a/x.js")\nexport const z = 1`,
      "src/d/t.ts": `import type { T } from "../e/u.js"\nexport type D = T`,
      "src/e/u.ts": `import { d } from "../d/v.js"\nexport type T = 1`,
      "src/d/v.ts": `export const d = 1`,
      "src/main.ts": `import { y } from "./b/y.js"`
    })
    const vs = checkLayers(g)
    expect(vs.map((v) => v.file)).toEqual(["src/{a,b,c}"])
    expect(vs[0]?.message).toContain("src/c/z.ts")
    expect(checkLayers(fixture({ "src/a/x.ts": `import "../b/y.js"`, "src/b/y.ts": `export {}` }))).toEqual([])
  })

  it("ADAPTER reports SQL and schemas of their own in routes and tools, not elsewhere", () => {
    const g = fixture({
      "src/http/routes/a.ts": "const q = sql`SELECT id FROM rule`",
      "src/http/routes/b.ts": `import * as z from "zod"\nexport const s = z.string()`,
      "src/mcp/tools/c.ts": `import { Schema } from "effect"\nexport const s = Schema.String.pipe(Schema.minLength(2))`,
      "src/mcp/tools/d.ts": `import { Schema } from "effect"\nimport { RuleRef } from "../../contracts/ids.js"\nexport const s = Schema.Struct({ ref: RuleRef })`,
      "src/domain/e.ts": "import { Schema } from \"effect\"\nexport const s = Schema.String\nconst q = `SELECT 1`"
    })
    expect(rulesOf(checkAdapters(g, readIn(g))).sort()).toEqual([
      "ADAPTER src/http/routes/a.ts",
      "ADAPTER src/http/routes/b.ts",
      "ADAPTER src/mcp/tools/c.ts"
    ])
  })
})
