/**
 * The CLI's help (gaps.md §9 CLI): plain text, at most 80 columns (an example may run longer:
 * it is one command to copy), one example per command, no bare usage line, no --wizard; every
 * command of gaps.md §9 (except retract, which the lead adds with its route) has its page, and
 * docs/cli.md names every one.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { COMMANDS, commandHelp, GROUPS, groupHelp, helpRequest, rootHelp } from "../../src/ops/cli-help.js"

const GAPS_COMMANDS = [
  "serve", "version", "config show", "config path", "config init", "status", "scope create",
  "grants list", "grants create", "grants disable", "grants rename",
  "backup run", "backup probe", "backup verify", "backup nightly", "backup litestream-config", "restore", "doctor", "export",
  "key create", "key list", "key add-recipient", "key rotate",
  "sources put", "sources get", "search", "rules list", "rules get", "rules versions", "rules provenance",
  "proposals list", "propose", "feedback", "retract", "approvals open", "approvals digest"
]

const plainAndNarrow = (text: string, label: string) => {
  expect(text.includes("\u001b"), label).toBe(false)
  expect(text, label).not.toContain("--wizard")
  expect(text, label).not.toContain("--completions")
  expect(text, label).not.toMatch(/^\$ groundnote\s*$/m)
  const lines = text.split("\n")
  const example = lines.findIndex((l) => l === "Example:")
  for (const [i, line] of lines.entries()) {
    if (i === example + 1) continue
    expect(line.length, `${label}: ${line}`).toBeLessThanOrEqual(80)
  }
}

describe("help", () => {
  it("has a page for every command of gaps.md §9 with what it does and exactly one example", () => {
    expect(COMMANDS.map((c) => c.path).sort()).toEqual([...GAPS_COMMANDS].sort())
    for (const doc of COMMANDS) {
      const text = commandHelp(doc)
      plainAndNarrow(text, doc.path)
      expect(text.startsWith(`groundnote ${doc.path}: ${doc.summary}`.slice(0, 60))).toBe(true)
      expect(text.match(/^Example:$/gm)?.length, doc.path).toBe(1)
      expect(doc.example, doc.path).toContain(`groundnote ${doc.path}`)
      expect(text).toContain("Exit codes: 0 ok, 1 error")
    }
  })

  it("the root and every group list their commands, plain and narrow", () => {
    plainAndNarrow(rootHelp(), "root")
    for (const path of GAPS_COMMANDS) expect(rootHelp()).toContain(`  ${path} `)
    for (const g of GROUPS) {
      const text = groupHelp(g)
      plainAndNarrow(text, g.path)
      expect(text.split("\n").filter((l) => l.startsWith(`  ${g.path} `)).length).toBeGreaterThan(0)
    }
  })

  it("--help and -h anywhere before -- ask for the page of the command named before them", () => {
    expect(helpRequest(["--help"])).toEqual({ kind: "help", text: rootHelp() })
    expect(helpRequest(["backup", "probe", "--help"])).toEqual({ kind: "help", text: commandHelp(COMMANDS.find((c) => c.path === "backup probe") ?? COMMANDS[0]!) })
    expect(helpRequest(["backup", "-h"])).toEqual({ kind: "help", text: groupHelp(GROUPS.find((g) => g.path === "backup") ?? GROUPS[0]!) })
    expect(helpRequest(["restore", "--to", "x", "--help"])).toMatchObject({ kind: "help", text: expect.stringContaining("groundnote restore:") })
    expect(helpRequest(["search", "--", "--help"])).toEqual({ kind: "none" })
    expect(helpRequest(["nope", "--help"])).toMatchObject({ kind: "usage", message: "unknown command: nope" })
  })

  it("no command, a bare group and --wizard are usage errors", () => {
    expect(helpRequest([])).toMatchObject({ kind: "usage", message: null })
    expect(helpRequest(["grants"])).toMatchObject({ kind: "usage", text: expect.stringContaining("grants create") })
    expect(helpRequest(["status", "--wizard"])).toMatchObject({ kind: "usage", message: "--wizard is not an option of groundnote" })
    expect(helpRequest(["status"])).toEqual({ kind: "none" })
    expect(helpRequest(["grants", "list"])).toEqual({ kind: "none" })
  })

  it("an unknown command, or an unknown command of a group, is named with the nearest one and its list", () => {
    expect(helpRequest(["grants", "lst"])).toEqual({
      kind: "usage", text: groupHelp(GROUPS.find((g) => g.path === "grants") ?? GROUPS[0]!), message: "unknown command: grants lst (did you mean grants list?)"
    })
    expect(helpRequest(["serch", "--scope", "demo"])).toEqual({ kind: "usage", text: rootHelp(), message: "unknown command: serch (did you mean search?)" })
    expect(helpRequest(["backup", "frobnicate"])).toMatchObject({ kind: "usage", message: "unknown command: backup frobnicate" })
    expect(helpRequest(["x".repeat(60)])).toMatchObject({ message: `unknown command: ${"x".repeat(40)}…` })
    expect(helpRequest(["gr\u001b[2Jants"])).toMatchObject({ message: "unknown command: gr\\u001b[2Jants" })
    // every command of the help table, with its positionals and option values, is left to the parser
    // (config init takes no arguments at all: the secrets come from stdin)
    for (const doc of COMMANDS.filter((c) => c.path !== "config init")) expect(helpRequest([...doc.path.split(" "), "--scope", "demo", "x"]), doc.path).toEqual({ kind: "none" })
    expect(helpRequest(["backup", "--json", "run"])).toEqual({ kind: "none" })
  })

  it("docs/cli.md documents every command", () => {
    const doc = readFileSync(join(import.meta.dirname, "..", "..", "docs", "cli.md"), "utf8")
    for (const path of GAPS_COMMANDS) expect(doc, path).toContain(`groundnote ${path}`)
  })
})
