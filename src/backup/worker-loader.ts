/**
 * Where the backup worker's entry file is and how Node must start it.
 *
 * Built (dist/src/backup/*.js): the worker is dist/src/backup/worker.js, started as is.
 * From TypeScript source (vitest, which runs src/ through its own transformer in the main thread
 * only): a worker thread is a fresh Node instance that cannot run .ts, so it is started with
 * `--import` of a small module that registers resolve/load hooks (node:module register): a
 * relative `./x.js` that does not exist next to a .ts importer resolves to `./x.ts`, and .ts files
 * are transpiled with the project's own `typescript` (transpileModule: types stripped, nothing
 * checked). The hooks travel as data: URLs, so no file outside src/ is needed and nothing of it
 * exists in dist/. The same argv starts a child process on a .ts file (the kill -9 test).
 */

const HOOKS = `
import { readFile } from "node:fs/promises"
import { existsSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { createRequire } from "node:module"
let ts
export async function resolve(specifier, context, next) {
  const parent = context.parentURL
  if (parent !== undefined && parent.startsWith("file:") && parent.endsWith(".ts") &&
      (specifier.startsWith("./") || specifier.startsWith("../")) && specifier.endsWith(".js")) {
    const asJs = new URL(specifier, parent)
    if (!existsSync(fileURLToPath(asJs))) {
      const asTs = new URL(specifier.slice(0, -3) + ".ts", parent)
      if (existsSync(fileURLToPath(asTs))) return { url: asTs.href, shortCircuit: true }
    }
  }
  return next(specifier, context)
}
export async function load(url, context, next) {
  if (!url.startsWith("file:") || !url.endsWith(".ts")) return next(url, context)
  const file = fileURLToPath(url)
  ts ??= createRequire(file)("typescript")
  const source = await readFile(file, "utf8")
  const out = ts.transpileModule(source, {
    fileName: file,
    compilerOptions: {
      module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true,
      sourceMap: false, inlineSourceMap: true, inlineSources: false
    }
  })
  return { format: "module", source: out.outputText, shortCircuit: true }
}
`

const dataUrl = (code: string): string => `data:text/javascript,${encodeURIComponent(code)}`

/** Node options that let a worker thread or a child process run TypeScript source files. */
export const typeScriptExecArgv = (): ReadonlyArray<string> => [
  "--import",
  dataUrl(`import { register } from "node:module"; register(${JSON.stringify(dataUrl(HOOKS))});`)
]

export interface WorkerEntry {
  /** file URL of the worker's entry module */
  readonly url: URL
  /** Node options for the worker thread */
  readonly execArgv: ReadonlyArray<string>
  /** "dist" when running compiled JavaScript, "source" when running TypeScript source */
  readonly mode: "dist" | "source"
}

/**
 * The entry of the backup worker next to `importerUrl` (the import.meta.url of a module in
 * src/backup/): worker.js when the importer is compiled JavaScript, worker.ts with the
 * TypeScript hooks when it is TypeScript source.
 */
export const workerEntry = (importerUrl: string): WorkerEntry => {
  const source = new URL(importerUrl).pathname.endsWith(".ts")
  return source
    ? { url: new URL("./worker.ts", importerUrl), execArgv: typeScriptExecArgv(), mode: "source" }
    : { url: new URL("./worker.js", importerUrl), execArgv: [], mode: "dist" }
}
