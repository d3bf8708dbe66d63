/**
 * A write by another process (a second service on the same data dir, a restore, the CLI's tools):
 * its notes of the index changes never reach this process, so a connection that held explained
 * rows, typo lists and phrase rows under the old stamps starts them empty, and the next search
 * answers what a search reading everything from the file answers (src/search/lexical/stamp-cache.ts).
 */
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { typeScriptExecArgv } from "../../src/backup/worker-loader.js"
import type { SearchRequest } from "../../src/domain/search-schemas.js"
import { explainRowsRead } from "../../src/search/lexical/explain.js"
import { search } from "../../src/search/search.js"
import { answerOf, at, freshAnswer, salesRequest, SEARCH_ID } from "./cache-support.js"
import { salesScope } from "./cache-scope.js"

const CHILD = fileURLToPath(new URL("./fixtures/write-child.ts", import.meta.url))

const STATEMENTS = [
  ["Rechnungen mit Skonto werden innerhalb von zehn Tagen bezahlt", ["Rechnung", "Skonto"]],
  ["Die Lieferzeit für Hakenleisten erfragt der Einkauf beim Lieferanten", ["Lieferzeit", "Hakenleiste"]],
  ["Rechnungen an Neukunden gehen per Post", ["Rechnung", "Kunde"]]
] as const

const TEXT = "Rechnung Skontp Versand"
const req = (text: string): SearchRequest => salesRequest({ text })

const scope = salesScope(STATEMENTS)

/** the answer of a search that reads everything from the file (no cache) */
const fresh = () => freshAnswer(scope.config, req(TEXT))
const find = async () => {
  const before = explainRowsRead()
  const r = await scope.service.runPromise(at(search(req(TEXT), SEARCH_ID)))
  const versand = r.response.bundles.find((b) => b.head.ref === "rule/sales-0001@3")?.head.found_via
  return { answer: answerOf(r), variants: r.response.query.variants, versand, rowsRead: explainRowsRead() - before }
}

/** Runs write-child.ts in a process of its own; resolves when it has written and exited. */
const writeFromAnotherProcess = () =>
  new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, [...typeScriptExecArgv(), CHILD, scope.dir], { stdio: ["ignore", "pipe", "pipe"] })
    let output = ""
    child.stdout.on("data", (d: Buffer) => (output += d.toString("utf8")))
    child.stderr.on("data", (d: Buffer) => (output += d.toString("utf8")))
    child.once("exit", (code) => (code === 0 && output.includes("written") ? resolve() : reject(new Error(`write-child exited ${String(code)}:\n${output.slice(-2000)}`))))
  })

describe("a write by another process", () => {
  it("leaves no held row, typo list or phrase stale: the next search answers as the file does", async () => {
    await find()
    const steady = await find()
    expect(steady.answer).toEqual(await fresh())
    expect(steady.variants["skontp"]).not.toContain("skonti")

    await writeFromAnotherProcess()
    const after = await find()
    expect(after.rowsRead).toBeGreaterThan(0)
    expect(after.variants["skontp"]).toContain("skonti")
    expect(after.versand).toContain("versand")
    expect(after.answer).toEqual(await fresh())
  }, 60_000)
})
