/**
 * The compact search answer of the MCP tool search_rules (architecture.md §6.5 "Compact form"),
 * built from the full SearchResponse after search() wrote its search_log row.
 *
 * Heads keep what a model needs to cite and judge a rule; groups name their entries by ref;
 * every entry the bundles name appears once in `related` (title cut to RELATED_TITLE_CHARS).
 * The source group is left out (it is head.source); so is head.entities (graph.md §11): the
 * entity group names the entities by ref and `related` carries each one's path as its title,
 * once per answer. The answer is capped at
 * SEARCH_COMPACT_MAX_CHARS over the larger of the rendered model text and the structured JSON:
 * whole bundles are dropped from the end, then the first bundle's group refs from the end,
 * then its quote is cut with "…" — each a binary search over the rendered size. The first head
 * with its statement and line always stays.
 */
import { Schema } from "effect"
import { Adoption, Day, Instant, RedactedFlag } from "../contracts/schemas.js"
import {
  Abstained,
  type Bundle,
  EntryKind,
  type Group,
  GroupKind,
  type SearchResponse,
  StageState
} from "../domain/search-schemas.js"
import { ScopeName } from "../contracts/ids.js"

export const SEARCH_COMPACT_MAX_CHARS = 30_000
export const RELATED_TITLE_CHARS = 120

export const CompactGroup = Schema.Struct({
  kind: GroupKind,
  count: Schema.Number,
  refs: Schema.Array(Schema.String).pipe(Schema.maxItems(5)),
  proposed_refs: Schema.optional(Schema.Array(Schema.String).pipe(Schema.minItems(1), Schema.maxItems(5)))
})
export type CompactGroup = typeof CompactGroup.Type

export const CompactHead = Schema.Struct({
  ref: Schema.String,
  kind: Schema.Literal("rule", "note"),
  status: Schema.Literal("confirmed", "proposed", "superseded"),
  scope: ScopeName,
  title: Schema.String,
  quote: Schema.String,
  date: Instant,
  valid_from: Day,
  valid_until: Schema.NullOr(Day),
  recheck: Schema.NullOr(Schema.Literal("still valid?")),
  adoption: Adoption,
  source: Schema.Struct({
    kind: Schema.Literal("jamie", "mail", "manual"), id: Schema.String,
    timestamp: Schema.NullOr(Schema.String), link: Schema.NullOr(Schema.String)
  }),
  coverage: Schema.NullOr(Schema.Number),
  /** a redaction touched the head's rule version (statement, quote, speaker, relations, keywords) */
  redacted: RedactedFlag
})
export type CompactHead = typeof CompactHead.Type

export const CompactBundle = Schema.Struct({ head: CompactHead, groups: Schema.Array(CompactGroup), line: Schema.String })
export type CompactBundle = typeof CompactBundle.Type

export const RelatedEntry = Schema.Struct({ ref: Schema.String, kind: EntryKind, date: Instant, title: Schema.String, redacted: RedactedFlag })
export type RelatedEntry = typeof RelatedEntry.Type

export const Truncated = Schema.Struct({
  omitted: Schema.Number,
  omitted_refs: Schema.optional(Schema.Number),
  quote_cut: Schema.optional(Schema.Literal(true))
})
export type Truncated = typeof Truncated.Type

export const CompactSearchResponse = Schema.Struct({
  search_id: Schema.String,
  scopes: Schema.Array(ScopeName),
  stages: Schema.Struct({ a: StageState, b: StageState, c: StageState }),
  query: Schema.Struct({ terms: Schema.Array(Schema.String) }),
  bundles: Schema.Array(CompactBundle),
  abstained: Schema.NullOr(Abstained),
  related: Schema.Array(RelatedEntry),
  truncated: Schema.NullOr(Truncated)
})
export type CompactSearchResponse = typeof CompactSearchResponse.Type

/** The model text of a compact answer; its length counts against the cap with the JSON's. */
export type CompactRender = (compact: CompactSearchResponse) => string

const json: CompactRender = (c) => JSON.stringify(c)

/** The first `max` characters (code points) of a text, ending in … when shortened. */
export const cutTitle = (text: string, max = RELATED_TITLE_CHARS): string => {
  const chars = [...text]
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join("")}…`
}

const compactHead = (b: Bundle): CompactHead => {
  const h = b.head
  return {
    ref: h.ref,
    kind: h.kind,
    status: h.status,
    scope: h.scope,
    title: h.title,
    quote: h.source.quote,
    date: h.date,
    valid_from: h.valid_from,
    valid_until: h.valid_until,
    recheck: h.recheck,
    adoption: h.adoption,
    source: { kind: h.source.kind, id: h.source.id, timestamp: h.source.timestamp, link: h.source.link },
    coverage: h.coverage,
    ...(h.redacted === true ? { redacted: true } : {})
  }
}

const compactGroup = (g: Group): CompactGroup => {
  const proposed = g.entries.filter((e) => e.proposed).map((e) => e.ref)
  return {
    kind: g.kind,
    count: g.count,
    refs: g.entries.map((e) => e.ref),
    ...(proposed.length > 0 ? { proposed_refs: proposed } : {})
  }
}

const compactBundle = (b: Bundle): CompactBundle => ({
  head: compactHead(b),
  groups: b.groups.filter((g) => g.kind !== "source").map(compactGroup),
  line: b.line
})

/** Every entry the (kept) compact bundles name, once, in first-named order. */
const relatedOf = (bundles: ReadonlyArray<CompactBundle>, entries: ReadonlyMap<string, RelatedEntry>): Array<RelatedEntry> => {
  const seen = new Set<string>()
  const out: Array<RelatedEntry> = []
  for (const b of bundles) {
    for (const g of b.groups) {
      for (const ref of g.refs) {
        const e = entries.get(ref)
        if (e === undefined || seen.has(ref)) continue
        seen.add(ref)
        out.push(e)
      }
    }
  }
  return out
}

/** The first bundle with only its first `keep` group refs (in group order); counts stay. */
const keepRefs = (b: CompactBundle, keep: number): CompactBundle => {
  let left = keep
  return {
    ...b,
    groups: b.groups.map((g) => {
      const refs = g.refs.slice(0, Math.max(0, left))
      left -= refs.length
      const proposed = (g.proposed_refs ?? []).filter((r) => refs.includes(r))
      const { proposed_refs: _dropped, ...rest } = g
      return { ...rest, refs, ...(proposed.length > 0 ? { proposed_refs: proposed } : {}) }
    })
  }
}

/** The first bundle with its quote cut to `keep` characters (code points) plus "…". */
const cutQuote = (b: CompactBundle, keep: number): CompactBundle => ({
  ...b,
  head: { ...b.head, quote: `${[...b.head.quote].slice(0, keep).join("")}…` }
})

/** The largest n in [lo, hi] with fits(n), given fits(lo) (fits monotone: true up to some n). */
const largest = (lo: number, hi: number, fits: (n: number) => boolean): number => {
  let a = lo
  let b = hi
  while (a < b) {
    const mid = Math.ceil((a + b) / 2)
    if (fits(mid)) a = mid
    else b = mid - 1
  }
  return a
}

/**
 * The compact form of a full search response, at most SEARCH_COMPACT_MAX_CHARS characters
 * (UTF-16 code units, which never undercount) of the larger of render(compact) and its JSON.
 * `render` is the model-text renderer of the MCP result (default: the JSON itself); `structured`
 * gives the tool result's structured content (default: the compact answer itself), whose JSON
 * is measured — the MCP tool passes renderResultForModel and annotateForeign of
 * src/security/model-output.ts, so the cap measures exactly what the tool answers.
 */
export const toCompact = (
  full: SearchResponse,
  render: CompactRender = json,
  structured: (compact: CompactSearchResponse) => unknown = (c) => c
): CompactSearchResponse => {
  const all = full.bundles.map(compactBundle)
  const entries = new Map<string, RelatedEntry>()
  for (const b of full.bundles) {
    for (const g of b.groups) {
      if (g.kind === "source") continue
      for (const e of g.entries) {
        if (!entries.has(e.ref)) entries.set(e.ref, {
          ref: e.ref, kind: e.kind, date: e.date, title: cutTitle(e.title), ...(e.redacted === true ? { redacted: true } : {})
        })
      }
    }
  }
  const make = (bundles: ReadonlyArray<CompactBundle>, truncated: Truncated | null): CompactSearchResponse => ({
    search_id: full.search_id,
    scopes: full.scopes,
    stages: full.stages,
    query: { terms: full.query.terms },
    bundles,
    abstained: full.abstained,
    related: relatedOf(bundles, entries),
    truncated
  })
  const size = (c: CompactSearchResponse): number => Math.max(render(c).length, JSON.stringify(structured(c)).length)
  const fits = (c: CompactSearchResponse): boolean => size(c) <= SEARCH_COMPACT_MAX_CHARS

  const whole = make(all, null)
  const first = all[0]
  if (first === undefined || fits(whole)) return whole

  // 1. whole bundles from the end (at least the first stays)
  const withBundles = (k: number) => make(all.slice(0, k), { omitted: all.length - k })
  if (fits(withBundles(1))) return withBundles(largest(1, all.length, (n) => fits(withBundles(n))))

  // 2. the first bundle alone is over: its group refs from the end, counts stay
  const omitted = all.length - 1
  const totalRefs = first.groups.reduce((n, g) => n + g.refs.length, 0)
  const withRefs = (r: number) =>
    make([keepRefs(first, r)], { omitted, ...(r < totalRefs ? { omitted_refs: totalRefs - r } : {}) })
  const fitsRefs = (r: number) => fits(withRefs(r))
  if (totalRefs > 0 && fitsRefs(0)) return withRefs(largest(0, totalRefs, fitsRefs))

  // 3. then its quote, cut with "…"; the head with statement and line always stays
  const bare = keepRefs(first, 0)
  const quoteChars = [...first.head.quote].length
  const refsCut = totalRefs > 0 ? { omitted_refs: totalRefs } : {}
  const withQuote = (q: number) => make([cutQuote(bare, q)], { omitted, ...refsCut, quote_cut: true })
  const q = largest(0, Math.max(0, quoteChars - 1), (n) => n === 0 || fits(withQuote(n)))
  return withQuote(q)
}
