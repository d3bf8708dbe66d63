/**
 * `npm run build` (also the first step of `npm start`) builds only what changed: a build of an
 * unchanged checkout writes no file of dist/, and its build record lives inside dist/, so a
 * deleted dist/ is built whole again and nothing of it reaches git.
 */
import { execFile } from "node:child_process"
import { promisify } from "node:util"
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative } from "node:path"
import { expect, it } from "vitest"

const ROOT = join(import.meta.dirname, "..")
const DIST = join(ROOT, "dist")

/** Runs package.json's build script as npm would, without npm (its `tsc` is the local one). */
const runBuild = async (): Promise<void> => {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }
  const [bin, ...args] = (pkg.scripts.build ?? "").split(" ")
  expect(bin).toBe("tsc")
  await promisify(execFile)(process.execPath, [join(ROOT, "node_modules", "typescript", "bin", "tsc"), ...args], { cwd: ROOT })
}

/** Every file under dist/src with its modification time. */
const stamps = (dir: string, out = new Map<string, number>()): Map<string, number> => {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = join(dir, entry.name)
    if (entry.isDirectory()) stamps(file, out)
    else out.set(relative(DIST, file), statSync(file).mtimeMs)
  }
  return out
}

it("a build of an unchanged checkout writes nothing, and its build record lies inside the ignored dist/", async () => {
  const config = JSON.parse(readFileSync(join(ROOT, "tsconfig.build.json"), "utf8")) as { compilerOptions?: { incremental?: boolean; tsBuildInfoFile?: string } }
  expect(config.compilerOptions?.incremental).toBe(true)
  expect(config.compilerOptions?.tsBuildInfoFile?.startsWith("dist/")).toBe(true)
  expect(readFileSync(join(ROOT, ".gitignore"), "utf8").split("\n")).toContain("dist/")

  await runBuild() // brings dist/ up to date (a targeted run may skip the suite's build)
  const before = stamps(join(DIST, "src"))
  expect(before.get(join("src", "ops", "cli.js"))).toBeDefined()
  await runBuild()
  expect(stamps(join(DIST, "src"))).toEqual(before)
  expect(statSync(join(ROOT, config.compilerOptions?.tsBuildInfoFile ?? "")).isFile()).toBe(true)
}, 300_000)
