/**
 * The repository speaks of the product, not of the work that built it: no numbered or named work
 * period, tracker entry, worker or part of one in src/, test/, bench/, docs/, config/, eval/ or
 * README.md. A comment that needs a reason states it, or points to a decision by its heading:
 * "(docs/decisions.md, §7 Search stage a)". Product words stay: an approval session, an HTTP
 * session, a JSON array's items, a validation issue, V8's helper threads.
 *
 * The words looked for are put together from their parts below, so this file does not name them
 * either. Every text file under those folders is read; a failure lists every hit as file:line.
 */
import fs from "node:fs"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")
const FOLDERS = ["src", "test", "bench", "docs", "config", "eval"]
const FILES = ["README.md"]

/** The words looked for, put together from their parts (this file does not spell them out). */
const SESSION = ["sess", "ion"].join("")
const ISSUE = ["iss", "ue"].join("")
const ITEM = ["it", "em"].join("")
const DEFECT = ["def", "ect"].join("")
const HELPER = ["hel", "per"].join("")
const TASK = ["ta", "sk"].join("")
const CI_RUN = ["CI", "run"].join(" ")
const LEAD = ["le", "ad"].join("")

/** Each pattern names what it catches; all are case-insensitive. */
const PATTERNS: ReadonlyArray<readonly [string, RegExp]> = [
  ["work-period number", new RegExp(`\\b${SESSION}s?[ -]\\d`, "i")],
  ["work period", new RegExp(`\\b(?:this|that|last|previous|earlier|later|other) ${SESSION}s?\\b(?!\\s+(?:cookie|row|id|secret|token|table|expir))`, "i")],
  ["tracker number", new RegExp(`\\b${ISSUE}s? #?\\d`, "i")],
  ["list number", new RegExp(`\\b${ITEM}s? \\d`, "i")],
  ["defect number", new RegExp(`\\b${DEFECT}s? #?\\d`, "i")],
  ["worker name", new RegExp(`\\b${HELPER} (?!threads?\\b)["“«'a-z]`, "i")],
  ["workers at work", new RegExp(`\\b${HELPER}s (?:ran|called|built|wrote|found|checked)\\b`, "i")],
  ["part of a work period", new RegExp(`\\bsub-?${TASK}s?\\b`, "i")],
  ["a work period's CI check", new RegExp(`\\bfound in [^.\\n]{0,60}\\b${CI_RUN}\\b|'s ${CI_RUN}\\b`, "i")],
  ["a worker's name", new RegExp(`(?<![\\w.$])\\(${LEAD}(?:[;,] |\\))`, "i")]
]

interface Hit {
  readonly file: string
  readonly line: number
  readonly what: string
  readonly text: string
}

/** Every work-period word of one text, by line. */
const workPeriodWords = (file: string, text: string): Array<Hit> =>
  text.split("\n").flatMap((line, i) =>
    PATTERNS.flatMap(([what, re]) => {
      const m = re.exec(line)
      return m === null ? [] : [{ file, line: i + 1, what, text: m[0] }]
    })
  )

const listFiles = (dir: string): Array<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name)
    if (e.isDirectory()) return listFiles(full)
    return e.isFile() ? [full] : []
  })

/** A file with a NUL byte in its first 8 KB is not text (a gzip fixture, an image). */
const isText = (bytes: Buffer): boolean => !bytes.subarray(0, 8192).includes(0)

describe("repository words", () => {
  it("the rule catches work-period words and leaves product words alone", () => {
    const flagged = [
      `measured in ${SESSION} 6`, `${SESSION}s 10 and 15`, `${SESSION} 12's ${CI_RUN}`, `(${ISSUE} 14)`, `${ISSUE} 16 ${ITEM} 4`,
      `${ITEM}s 7 and 8`, `${ISSUE} 15 ${DEFECT} 6`, `${HELPER} "first"`, `(${HELPER} rel)`, `${HELPER} bundles`, `a sub-${TASK}`,
      `the sub${TASK}`, `found in ${ISSUE} 14's ${CI_RUN}`, `in this ${SESSION}`, `(${LEAD}; bundle.ts)`, `${HELPER}s ran every statement`
    ]
    for (const s of flagged) expect(workPeriodWords("x", s), s).not.toEqual([])
    const allowed = [
      "the approval session with CSRF", "an HTTP session", "sessionCookieName", "the session cookie",
      "ended_session rows", "`items` of the array", "items: [1, 2]", "the issue `(body)`", "at most 20 issues",
      "V8's helper threads", "File helpers for the data dir", "entity-helpers.js", "CI runs the tests",
      "`.ci/run` runs what CI runs", "slice A", `the last ${SESSION} cookie`, "v.slice(lead)"
    ]
    for (const s of allowed) expect(workPeriodWords("x", s), s).toEqual([])
  })

  it("no work-period number or name in src/, test/, bench/, docs/, config/, eval/ or README.md", () => {
    const files = [
      ...FOLDERS.filter((d) => fs.existsSync(path.join(ROOT, d))).flatMap((d) => listFiles(path.join(ROOT, d))),
      ...FILES.map((f) => path.join(ROOT, f)).filter((f) => fs.existsSync(f))
    ].map((f) => path.relative(ROOT, f)).sort()
    expect(files).toContain("docs/decisions.md")
    expect(files).toContain("README.md")
    expect(files).toContain("test/arch/repository-words.test.ts")
    const hits = files.flatMap((file) => {
      const bytes = fs.readFileSync(path.join(ROOT, file))
      return isText(bytes) ? workPeriodWords(file, bytes.toString("utf8")) : []
    })
    expect(hits.map((h) => `${h.file}:${h.line}: ${h.what}: "${h.text}"`)).toEqual([])
  })

  it("every pointer into docs/decisions.md names one of its headings", () => {
    const headings = new Set(
      fs.readFileSync(path.join(ROOT, "docs/decisions.md"), "utf8").split("\n")
        .filter((l) => l.startsWith("## ")).map((l) => l.slice(3).trim())
    )
    const pointers = [
      ...FOLDERS.filter((d) => fs.existsSync(path.join(ROOT, d))).flatMap((d) => listFiles(path.join(ROOT, d))),
      path.join(ROOT, "README.md")
    ].filter((f) => /\.(?:ts|md|json)$/.test(f)).flatMap((f) => {
      // a pointer may wrap across comment lines: join them first
      const text = fs.readFileSync(f, "utf8").replace(/\s*\n\s*(?:\*(?!\/)|\/\/|#)?\s*/g, " ")
      return [...text.matchAll(/docs\/decisions\.md, ((?:graph\.md |gaps\.md )?§[\d.]+ [^)"»;]+)\)/g)]
        .map((m) => ({ file: path.relative(ROOT, f), heading: m[1]!.trim() }))
    })
    expect(pointers.length).toBeGreaterThan(10)
    expect(pointers.filter((p) => !headings.has(p.heading)).map((p) => `${p.file}: ${p.heading}`)).toEqual([])
  })
})
