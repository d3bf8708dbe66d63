/**
 * The built CLI loads only what a command needs (src/ops/cli.ts): --help, version, config path,
 * status and grants list load neither the parser nor Effect, and no command but those that run
 * the service loads src/main.js or the SQL client. Every module the process loads is traced by a
 * loader hook (node --import), so what is checked is what node really loaded.
 */
import { spawnSync } from "node:child_process"
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { tempDir } from "../support/env.js"
import { CLI, cleanEnv, ROOT } from "./support.js"

const tmp = tempDir("gn-cli-load-")
afterAll(() => tmp.cleanup())

const hook = join(tmp.dir, "hook.mjs")
const register = join(tmp.dir, "register.mjs")
writeFileSync(hook, [
  `import { appendFileSync } from "node:fs"`,
  `export async function load(url, context, next) {`,
  `  if (process.env.GN_LOAD_TRACE) appendFileSync(process.env.GN_LOAD_TRACE, url + "\\n")`,
  `  return next(url, context)`,
  `}`
].join("\n"))
writeFileSync(register, `import { register } from "node:module"\nregister(${JSON.stringify(pathToFileURL(hook).href)})\n`)

let runs = 0
/** The URLs of every module the CLI loaded for `args`, and its exit code. */
const loaded = (args: ReadonlyArray<string>): { readonly modules: Array<string>; readonly code: number | null; readonly stdout: string } => {
  const trace = join(tmp.dir, `trace-${runs++}.txt`)
  writeFileSync(trace, "")
  const env = { ...cleanEnv(), GN_LOAD_TRACE: trace, XDG_CONFIG_HOME: tmp.dir, GROUNDNOTE_DATA_DIR: join(tmp.dir, "none") }
  const r = spawnSync(process.execPath, ["--import", pathToFileURL(register).href, CLI, ...args], { env, cwd: ROOT, encoding: "utf8", timeout: 60_000 })
  return { modules: readFileSync(trace, "utf8").split("\n").filter((l) => l !== ""), code: r.status, stdout: r.stdout }
}

const ofService = (m: string): boolean => m.endsWith("/dist/src/main.js") || /\/node_modules\/(?:@effect\/sql|better-sqlite3)/.test(m)
const heavy = (m: string): boolean => /\/node_modules\/(?:effect|@effect\/[a-z-]+)\//.test(m) || ofService(m)

describe("what each command of the built CLI loads", () => {
  it("--help, version, config path, status and grants list: no parser, no Effect, not the service", () => {
    for (const args of [["--help"], ["version"], ["version", "--json"], ["config", "path"], ["status", "--json"], ["grants", "list"]]) {
      const r = loaded(args)
      expect(r.modules.some((m) => m.endsWith("/dist/src/ops/cli.js")), args.join(" ")).toBe(true)
      expect(r.modules.filter(heavy), args.join(" ")).toEqual([])
    }
    // the answers are there: the quick path ran them, not a stub
    expect(loaded(["version"]).stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/)
    expect(loaded(["config", "path"]).stdout.trim()).toBe(join(tmp.dir, "groundnote", "cli.json"))
    const status = loaded(["status", "--json"])
    expect(status.code).toBe(1)
    expect(JSON.parse(status.stdout)).toMatchObject({ error: "ops-token-missing" })
  })

  it("a command the parser reads loads the command tree, but not the service or the SQL client", () => {
    for (const args of [["rules", "list", "--scope", "sales"], ["version", "--jsn"], ["grants", "create", "--kind", "person"]]) {
      const r = loaded(args)
      expect(r.modules.some((m) => m.endsWith("/dist/src/ops/cli-run.js")), args.join(" ")).toBe(true)
      expect(r.modules.some((m) => m.includes("/node_modules/@effect/cli/")), args.join(" ")).toBe(true)
      expect(r.modules.filter(ofService), args.join(" ")).toEqual([])
    }
  })
})
