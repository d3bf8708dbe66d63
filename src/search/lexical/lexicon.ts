/**
 * The lexicon of stage a: groups of terms that mean the same (one sense each), German and
 * English, built from maintained dictionaries (Ding, OpenThesaurus, WordNet) by
 * scripts/lexicon/build.ts into the committed file share/lexicon/lexicon.txt.gz (its format is
 * lexicon-file.ts; sources and licences in share/lexicon/README.md).
 *
 * Synonyms of a term are the other terms of its language in its groups, translations the other
 * side of its groups, and its sense count how many groups hold it.
 */
import { existsSync, readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { gunzipSync } from "node:zlib"
import { splitLexiconFile } from "./lexicon-file.js"
import { lexiconOverImage, packedLexicon } from "./lexicon-packed.js"

export type LexiconLang = "de" | "en"

export interface LexiconGroup {
  readonly de: ReadonlyArray<string>
  readonly en: ReadonlyArray<string>
}

export interface Lexicon {
  /** how many groups */
  readonly groups: number
  /** distinct (lang, term) pairs */
  readonly terms: number
  /** the groups that hold `term` (normalized) in `lang`, in stored order; [] when none */
  readonly groupsOf: (lang: LexiconLang, term: string) => ReadonlyArray<LexiconGroup>
}

/**
 * A term as the lexicon stores it and looks it up: NFKC, lower case, typographic apostrophes as
 * ', every run of white space one space, no space at either end.
 */
export const normalizeTerm = (term: string): string =>
  term.normalize("NFKC").toLowerCase().replace(/[\u2018\u2019\u02bc]/g, "'").replace(/\s+/g, " ").trim()

const NONE: ReadonlyArray<LexiconGroup> = Object.freeze([])

/** A lexicon over groups whose terms are normalized already (the file's, or lexiconOf's). */
export const lexiconOfNormalized = (groups: ReadonlyArray<LexiconGroup>): Lexicon => {
  const index = { de: new Map<string, Array<number>>(), en: new Map<string, Array<number>>() }
  groups.forEach((g, i) => {
    for (const lang of ["de", "en"] as const) {
      const map = index[lang]
      for (const term of g[lang]) {
        const at = map.get(term)
        if (at === undefined) map.set(term, [i])
        else if (at[at.length - 1] !== i) at.push(i)
      }
    }
  })
  return {
    groups: groups.length,
    terms: index.de.size + index.en.size,
    groupsOf: (lang, term) => {
      const at = index[lang].get(term)
      return at === undefined ? NONE : at.map((i) => groups[i] as LexiconGroup)
    }
  }
}

/** A lexicon from groups in memory (tests, and the curated layer); terms are normalized here. */
export const lexiconOf = (groups: Iterable<LexiconGroup>): Lexicon => {
  const normalized: Array<LexiconGroup> = []
  for (const g of groups) {
    const side = (terms: ReadonlyArray<string>) => [...new Set(terms.map(normalizeTerm).filter((t) => t !== ""))]
    normalized.push({ de: side(g.de), en: side(g.en) })
  }
  return lexiconOfNormalized(normalized)
}

/** The committed data file's name under share/lexicon. */
export const LEXICON_FILE_NAME = "lexicon.txt.gz"

/** The root of this installation: the nearest folder above this module holding package.json. */
export const installationRoot = (): string => {
  let dir = dirname(fileURLToPath(import.meta.url))
  for (;;) {
    if (existsSync(join(dir, "package.json"))) return dir
    const up = dirname(dir)
    if (up === dir) return process.cwd()
    dir = up
  }
}

/**
 * The committed data file, share/lexicon at the root of this installation, found from this
 * module in src/search/lexical (tests) and in dist/src/search/lexical (the build).
 */
export const lexiconFilePath = (): string => join(installationRoot(), "share", "lexicon", LEXICON_FILE_NAME)

/**
 * The unpacked bytes, in one output buffer sized by the gzip trailer's length field (unpacking
 * into the default 16 KB chunks and joining them costs a third more).
 */
const gunzip = (packed: Buffer): Buffer => {
  const size = packed.length >= 4 ? packed.readUInt32LE(packed.length - 4) : 0
  return gunzipSync(packed, { chunkSize: Math.max(64 * 1024, size + 1) })
}

/** The lexicon of a data file and its shared image (lexicon-packed.ts), or why it cannot be read. */
export const readLexiconFile = (path: string): { readonly ok: true; readonly lexicon: Lexicon; readonly image: SharedArrayBuffer } | { readonly ok: false; readonly why: string } => {
  let bytes: Buffer
  try {
    bytes = gunzip(readFileSync(path))
  } catch (e) {
    const code = (e as { code?: unknown }).code
    return { ok: false, why: `${path} cannot be read (${typeof code === "string" ? code : "error"})` }
  }
  const split = splitLexiconFile(bytes)
  if (!split.ok) return { ok: false, why: `${path}: ${split.why}` }
  const packed = packedLexicon(split.body, split.header.terms)
  if (packed.lines !== split.header.groups || packed.lexicon.terms !== split.header.terms) {
    return { ok: false, why: `${path}: the header says ${split.header.groups} groups and ${split.header.terms} terms, the file holds ${packed.lines} and ${packed.lexicon.terms} (truncated or edited?)` }
  }
  return { ok: true, lexicon: packed.lexicon, image: packed.image }
}

let shipped: { readonly lexicon: Lexicon | null; readonly image: SharedArrayBuffer | null; readonly from: "file" | "shared" } | undefined

const loadShipped = () => {
  if (shipped === undefined) {
    const read = readLexiconFile(lexiconFilePath())
    shipped = read.ok ? { lexicon: read.lexicon, image: read.image, from: "file" } : { lexicon: null, image: null, from: "file" }
  }
  return shipped
}

/** The shipped lexicon, read once per process from the committed data file; null when absent/unreadable. */
export const shippedLexicon = (): Lexicon | null => loadShipped().lexicon

/** The shipped lexicon's shared image (read once per process, as shippedLexicon), for a worker thread; null when absent. */
export const shippedLexiconImage = (): SharedArrayBuffer | null => loadShipped().image

/**
 * In a worker thread: the shipped lexicon is the one `image` holds (the main thread's, in shared
 * memory), not read from the file again. Nothing when this thread has its own already.
 */
export const adoptShippedLexicon = (image: SharedArrayBuffer): void => {
  shipped ??= { lexicon: lexiconOverImage(image), image, from: "shared" }
}

/** Where this thread's shipped lexicon came from: its own read of the file, another thread's image, or not yet asked for. */
export const shippedLexiconFrom = (): "file" | "shared" | "unread" => shipped?.from ?? "unread"
