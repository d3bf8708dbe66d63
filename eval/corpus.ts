/**
 * The evaluation corpus (eval/README.md): hand-written scope files with sources and rules, and
 * one file of queries with their relevant rule keys. Reading, shape checks and the conversion
 * to the service's own request types; nothing here touches a database.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { Schema } from "effect"
import type { ProposalRequest } from "../src/domain/proposal-schemas.js"
import { Day, Instant, Link } from "../src/contracts/schemas.js"
import { JamieId, MailId, ScopeName } from "../src/contracts/ids.js"
import type { SourceRequest } from "../src/domain/source-schemas.js"

const NonEmpty = Schema.String.pipe(Schema.minLength(1))
const Lines = Schema.Array(Schema.String).pipe(Schema.minItems(1))

export const CorpusMail = Schema.Struct({
  id: MailId,
  kind: Schema.Literal("mail"),
  title: NonEmpty,
  occurred_at: Instant,
  sender: Schema.optional(NonEmpty),
  thread: Schema.optional(MailId),
  link: Schema.optional(Link),
  /** the mail text, one entry per line (joined with "\n") */
  text: Lines
})
export type CorpusMail = typeof CorpusMail.Type

export const CorpusSegment = Schema.Struct({
  start_s: Schema.Number.pipe(Schema.int(), Schema.nonNegative()),
  speaker: NonEmpty,
  text: NonEmpty
})

export const CorpusJamie = Schema.Struct({
  id: JamieId,
  kind: Schema.Literal("jamie"),
  title: NonEmpty,
  occurred_at: Instant,
  link: Link,
  segments: Schema.Array(CorpusSegment).pipe(Schema.minItems(1))
})
export type CorpusJamie = typeof CorpusJamie.Type

export const CorpusSource = Schema.Union(CorpusMail, CorpusJamie)
export type CorpusSource = typeof CorpusSource.Type

/** `<kind>:<name>`, kind customer | product | supplier (the API's relation query form). */
export const RELATION_RE = /^(customer|product|supplier):(.+)$/

export const CorpusRule = Schema.Struct({
  key: Schema.String.pipe(Schema.pattern(/^[a-z0-9][a-z0-9-]*$/)),
  kind: Schema.optional(Schema.Literal("rule", "note")),
  status: Schema.optional(Schema.Literal("confirmed", "proposed", "rejected")),
  statement: NonEmpty,
  /** id of a source of the same scope */
  source: NonEmpty,
  quote: NonEmpty,
  /** jamie only: the second the quote was said */
  timestamp_s: Schema.optional(Schema.Number.pipe(Schema.int(), Schema.nonNegative())),
  speaker: Schema.optional(NonEmpty),
  said_at: Schema.optional(Instant),
  keywords: Schema.Array(Schema.String),
  relations: Schema.Array(Schema.String.pipe(Schema.pattern(RELATION_RE))),
  valid_from: Day,
  /** key of an earlier confirmed rule of the same scope */
  supersedes: Schema.optional(NonEmpty)
})
export type CorpusRule = typeof CorpusRule.Type

export const CorpusScopeFile = Schema.Struct({
  scope: ScopeName,
  sources: Schema.Array(CorpusSource),
  rules: Schema.Array(CorpusRule)
})
export type CorpusScopeFile = typeof CorpusScopeFile.Type

export const QUERY_CATEGORIES = [
  "typo", "compound", "inflection", "umlaut", "synonym", "cross-language", "paraphrase", "long-text", "code",
  "exact", "relation", "validity", "proposal", "cross-scope", "no-answer"
] as const
export type QueryCategory = (typeof QUERY_CATEGORIES)[number]

/** Directions of a cross-language query: de-en = German query, English rule; en-de the reverse. */
export const DIRECTIONS = ["de-en", "en-de"] as const
export type Direction = (typeof DIRECTIONS)[number]

export const CorpusQuery = Schema.Struct({
  id: NonEmpty,
  category: Schema.Literal(...QUERY_CATEGORIES),
  scopes: Schema.Array(ScopeName).pipe(Schema.minItems(1)),
  /** a string, or lines of a mail (joined with "\n") */
  text: Schema.optional(Schema.Union(NonEmpty, Lines)),
  terms: Schema.optional(Schema.Array(NonEmpty)),
  relation: Schema.optional(Schema.String.pipe(Schema.pattern(RELATION_RE))),
  as_of: Schema.optional(Day),
  include_proposals: Schema.optional(Schema.Boolean),
  /** cross-language only: the query's language → the answering rules' language (de-en: German query, English rule) */
  direction: Schema.optional(Schema.Literal(...DIRECTIONS)),
  /** rule keys; empty = nothing in the corpus answers the query */
  relevant: Schema.Array(NonEmpty),
  note: Schema.optional(NonEmpty)
})
export type CorpusQuery = typeof CorpusQuery.Type

export const QueriesFile = Schema.Struct({ queries: Schema.Array(CorpusQuery) })

export interface Corpus {
  /** scope files in file-name order; rules are loaded in this order */
  readonly files: ReadonlyArray<{ readonly name: string; readonly content: CorpusScopeFile }>
  readonly queries: ReadonlyArray<CorpusQuery>
}

export const QUERIES_FILE = "queries.json"

/** The instant the eval runs at (every write and every "today"), so validity is stable. */
export const EVAL_NOW = "2026-11-16T09:00:00Z"
/** Its calendar day in the eval's zone (Europe/Berlin). */
export const EVAL_DAY = "2026-11-16"

const strict = { onExcessProperty: "error", errors: "all" } as const

/** One corpus of the eval: a company and its domain, in its own directory under eval/. */
export interface CorpusInfo {
  /** what `--corpus` selects */
  readonly name: string
  readonly domain: string
  /** directory name under eval/ */
  readonly dir: string
}

/** The corpora in the order the eval runs and prints them (eval/README.md). */
export const CORPORA: ReadonlyArray<CorpusInfo> = [
  {
    name: "ladenbau",
    domain: "Ladenbau Nord GmbH, shop fitting: purchasing (einkauf, German) and sales (English) – suppliers, payment terms, delivery, discounts",
    dir: "corpus"
  },
  {
    name: "kunststoff",
    domain: "Weser Kunststofftechnik GmbH, injection moulding plant: quality, maintenance, health and safety, environment " +
      "(werk, German) and finance and controlling – travel expenses, invoice approval, budgets, capex (finance, English)",
    dir: "corpus-kunststoff"
  }
]

/** eval/<name> next to this file (eval/*.ts) or from dist/eval/*.js. */
export const corpusDir = (name: string): string => {
  const here = dirname(fileURLToPath(import.meta.url))
  const candidates = [join(here, name), join(here, "..", "..", "eval", name)]
  return candidates.find((d) => existsSync(join(d, QUERIES_FILE))) ?? candidates[0] ?? `eval/${name}`
}

/** eval/corpus: the first corpus (ladenbau). */
export const defaultCorpusDir = (): string => corpusDir("corpus")

/** Reads and shape-checks every *.json of the directory; throws naming the file on a bad shape. */
export const readCorpus = (dir: string = defaultCorpusDir()): Corpus => {
  const names = readdirSync(dir).filter((n) => n.endsWith(".json")).sort()
  const parse = <A, I>(schema: Schema.Schema<A, I>, name: string): A => {
    const raw: unknown = JSON.parse(readFileSync(join(dir, name), "utf8"))
    try {
      return Schema.decodeUnknownSync(schema, strict)(raw)
    } catch (e) {
      throw new Error(`${name}: ${e instanceof Error ? e.message : String(e)}`, { cause: e })
    }
  }
  const files = names.filter((n) => n !== QUERIES_FILE).map((name) => ({ name, content: parse(CorpusScopeFile, name) }))
  const queries = names.includes(QUERIES_FILE) ? parse(QueriesFile, QUERIES_FILE).queries : []
  return { files, queries }
}

/** Every rule with its scope, in load order. */
export const rulesOf = (corpus: Corpus): Array<CorpusRule & { readonly scope: string }> =>
  corpus.files.flatMap((f) => f.content.rules.map((r) => ({ ...r, scope: f.content.scope })))

/** Every source with its scope. */
export const sourcesOf = (corpus: Corpus): Array<{ readonly scope: string; readonly source: CorpusSource }> =>
  corpus.files.flatMap((f) => f.content.sources.map((source) => ({ scope: f.content.scope, source })))

/** Scopes in first-seen order. */
export const scopesOf = (corpus: Corpus): Array<string> => [...new Set(corpus.files.map((f) => f.content.scope))]

export const mailText = (mail: CorpusMail): string => mail.text.join("\n")

export const queryText = (q: CorpusQuery): string | undefined =>
  q.text === undefined ? undefined : typeof q.text === "string" ? q.text : q.text.join("\n")

export const parseRelation = (s: string): { kind: "customer" | "product" | "supplier"; name: string } => {
  const m = RELATION_RE.exec(s)
  if (m === null) throw new Error(`not a relation <kind>:<name>: ${s}`)
  return { kind: m[1] as "customer" | "product" | "supplier", name: m[2] ?? "" }
}

/** The SourceRequest of POST /v1/sources for a corpus source. */
export const toSourceRequest = (scope: string, s: CorpusSource): SourceRequest =>
  s.kind === "mail"
    ? {
      scope,
      source: {
        kind: "mail", id: s.id, title: s.title, occurred_at: s.occurred_at, sender: s.sender ?? null,
        thread: s.thread ?? null, link: s.link ?? null
      },
      text: mailText(s),
      attachments: []
    }
    : {
      scope,
      source: { kind: "jamie", id: s.id, title: s.title, occurred_at: s.occurred_at, sender: null, link: s.link },
      segments: s.segments.map((g) => ({ start_s: g.start_s, speaker: g.speaker, text: g.text })),
      attachments: []
    }

const addSeconds = (instant: string, seconds: number): string =>
  new Date(Date.parse(instant) + seconds * 1000).toISOString().replace(/\.000Z$/, "Z")

/**
 * The ProposalRequest for a corpus rule. said_at defaults to the source's occurred_at (+
 * timestamp_s for a meeting), speaker to the speaker of the quoted segment; the jamie link is the
 * meeting link with ?t=<timestamp_s>. `supersedes` is the rule id of the predecessor, if any.
 */
export const toProposalRequest = (
  scope: string,
  rule: CorpusRule,
  source: CorpusSource,
  supersedes: string | null
): ProposalRequest => {
  const relations = rule.relations.map((r) => ({ ...parseRelation(r), ref: null }))
  const common = {
    scope, kind: rule.kind ?? "rule", statement: rule.statement, relations, keywords: rule.keywords,
    valid_from: rule.valid_from, supersedes
  } as const
  if (source.kind === "mail") {
    return {
      ...common,
      source: { kind: "mail", id: source.id, quote: rule.quote, link: source.link ?? null },
      said_at: rule.said_at ?? source.occurred_at,
      speaker: rule.speaker ?? null
    }
  }
  const ts = rule.timestamp_s ?? 0
  const segment = source.segments.find((g) => g.start_s === ts)
  return {
    ...common,
    source: { kind: "jamie", id: source.id, quote: rule.quote, timestamp_s: ts, link: `${source.link}?t=${ts}` },
    said_at: rule.said_at ?? addSeconds(source.occurred_at, ts),
    speaker: rule.speaker ?? segment?.speaker ?? null
  }
}
