/**
 * The lexicon's data file (share/lexicon/lexicon.txt.gz, gzip-compressed): UTF-8 text, a header of `# ` lines, then
 * one group per line: its German terms joined by `|`, a tab, its English terms joined by `|`.
 * Terms are normalized (lexicon.ts normalizeTerm) and hold no `|`, tab or line break.
 *
 * The header names each source (its package, version and the SHA-256 of the files read), the
 * counts, and the SHA-256 of the body, so a check can tell a hand-edited or truncated file and
 * whether the file was built from the dictionaries installed on a machine.
 */
import { createHash } from "node:crypto"
import type { LexiconGroup } from "./lexicon.js"

export const LEXICON_FORMAT = "groundnote lexicon, format 1"

export interface LexiconSource {
  /** e.g. "ding" */
  readonly name: string
  /** the package it comes from, e.g. "trans-de-en" */
  readonly package: string
  readonly version: string
  /** SHA-256 (hex) of the source files read, in the order read */
  readonly sha256: string
}

export interface LexiconHeader {
  readonly sources: ReadonlyArray<LexiconSource>
  readonly groups: number
  readonly terms: number
  /** SHA-256 (hex) of the body */
  readonly content: string
}

const TERM_SEP = "|"
const SIDE_SEP = "\t"

export const sha256 = (data: string | Uint8Array): string => createHash("sha256").update(data).digest("hex")

/** The body lines of groups (each line ends with a line feed). */
export const encodeBody = (groups: ReadonlyArray<LexiconGroup>): string => {
  const lines: Array<string> = []
  for (const g of groups) lines.push(`${g.de.join(TERM_SEP)}${SIDE_SEP}${g.en.join(TERM_SEP)}\n`)
  return lines.join("")
}

const countTerms = (groups: ReadonlyArray<LexiconGroup>): number => {
  const de = new Set<string>()
  const en = new Set<string>()
  for (const g of groups) {
    for (const t of g.de) de.add(t)
    for (const t of g.en) en.add(t)
  }
  return de.size + en.size
}

/** The whole file: header and body. */
export const encodeLexiconFile = (sources: ReadonlyArray<LexiconSource>, groups: ReadonlyArray<LexiconGroup>): string => {
  const body = encodeBody(groups)
  const header = [
    `# ${LEXICON_FORMAT}`,
    "# one group (one sense) per line: German terms joined by |, a tab, English terms joined by |",
    "# built by scripts/lexicon/build.ts (npm run lexicon); sources and licences: share/lexicon/README.md",
    ...sources.map((s) => `# source ${s.name} ${s.package} ${s.version} sha256:${s.sha256}`),
    `# groups ${groups.length} terms ${countTerms(groups)}`,
    `# content sha256:${sha256(body)}`
  ]
  return `${header.join("\n")}\n${body}`
}

/** The header and the body (the bytes after the header lines) of a data file. */
export const splitLexiconFile = (bytes: Buffer): { readonly ok: true; readonly header: LexiconHeader; readonly body: Buffer } | { readonly ok: false; readonly why: string } => {
  let at = 0
  while (bytes[at] === 0x23) {
    const end = bytes.indexOf(0x0a, at)
    if (end < 0) return { ok: false, why: "the header does not end" }
    at = end + 1
  }
  const lines = bytes.toString("utf8", 0, at).split("\n")
  if (lines[0] !== `# ${LEXICON_FORMAT}`) return { ok: false, why: `not a lexicon file of ${LEXICON_FORMAT}` }
  const sources: Array<LexiconSource> = []
  let counts: { groups: number; terms: number } | null = null
  let content: string | null = null
  for (const line of lines) {
    const source = /^# source (\S+) (\S+) (\S+) sha256:([0-9a-f]{64})$/.exec(line)
    if (source !== null) sources.push({ name: source[1] as string, package: source[2] as string, version: source[3] as string, sha256: source[4] as string })
    const c = /^# groups (\d+) terms (\d+)$/.exec(line)
    if (c !== null) counts = { groups: Number(c[1]), terms: Number(c[2]) }
    const h = /^# content sha256:([0-9a-f]{64})$/.exec(line)
    if (h !== null) content = h[1] as string
  }
  if (counts === null || content === null) return { ok: false, why: "the header lacks its counts or content hash" }
  const body = bytes.subarray(at)
  if (body.length > 0 && body[body.length - 1] !== 0x0a) return { ok: false, why: "the last line does not end (truncated?)" }
  return { ok: true, header: { sources, groups: counts.groups, terms: counts.terms, content }, body }
}
