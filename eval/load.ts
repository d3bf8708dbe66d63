/**
 * Loads the corpus into a fresh data dir through the service's own writers: scope files
 * (ScopeStore.create), sources (storeSource), proposals with the quote check (propose), and a
 * person's decisions (decide: confirm, confirm with supersedes, reject). decide() is the
 * approval channel's writer; the eval uses it only to bring the corpus into its confirmed state.
 */
import { Effect } from "effect"
import { ScopeStore } from "../src/db/scope-store.js"
import { decide } from "../src/decision/decide.js"
import { parseRuleRef } from "../src/contracts/ids.js"
import { propose } from "../src/domain/proposals.js"
import { storeSource } from "../src/domain/sources.js"
import { type Corpus, rulesOf, scopesOf, sourcesOf, toProposalRequest, toSourceRequest } from "./corpus.js"

/** The feeder of the sources and the proposer of the rules. */
export const EVAL_FEEDER = "service:1"
/** The person who confirms, supersedes and rejects. */
export const EVAL_PERSON = { grantId: "person:1", identity: "eval@example.com" } as const

export interface Loaded {
  /** rule key → rule id */
  readonly ids: ReadonlyMap<string, string>
  /** rule id → rule key */
  readonly keys: ReadonlyMap<string, string>
  readonly sources: number
  readonly rules: number
}

const failOn = (what: string) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, never, R> =>
  Effect.catchAll(effect, (e) =>
    Effect.die(new Error(`eval corpus: ${what} failed: ${typeof e === "object" && e !== null && "_tag" in e ? String(e._tag) : String(e)}`)))

/** Creates the scopes and writes every source and rule, in file order. */
export const loadCorpus = (corpus: Corpus) =>
  Effect.gen(function*() {
    const store = yield* ScopeStore
    for (const scope of scopesOf(corpus)) yield* store.create(scope).pipe(failOn(`scope create ${scope}`))
    const sources = sourcesOf(corpus)
    for (const { scope, source } of sources) {
      yield* storeSource(toSourceRequest(scope, source), EVAL_FEEDER).pipe(failOn(`source ${source.id}`))
    }
    const byId = new Map(sources.map(({ scope, source }) => [`${scope} ${source.id}`, source]))
    const ids = new Map<string, string>()
    const rules = rulesOf(corpus)
    for (const rule of rules) {
      const source = byId.get(`${rule.scope} ${rule.source}`)
      if (source === undefined) return yield* Effect.die(new Error(`eval corpus: rule ${rule.key}: unknown source ${rule.source}`))
      const supersedes = rule.supersedes === undefined ? null : ids.get(rule.supersedes) ?? null
      if (rule.supersedes !== undefined && supersedes === null) {
        return yield* Effect.die(new Error(`eval corpus: rule ${rule.key}: supersedes ${rule.supersedes}, which is not loaded before it`))
      }
      const created = yield* propose(toProposalRequest(rule.scope, rule, source, supersedes), { grantId: EVAL_FEEDER, channel: "api" })
        .pipe(failOn(`propose ${rule.key}`))
      const id = parseRuleRef(created.ref)?.id
      if (id === undefined) return yield* Effect.die(new Error(`eval corpus: rule ${rule.key}: unexpected ref ${created.ref}`))
      ids.set(rule.key, id)
      const status = rule.status ?? "confirmed"
      if (status === "confirmed") {
        yield* decide(id, { decision: "confirm", version: 1 }, EVAL_PERSON).pipe(failOn(`confirm ${rule.key}`))
      } else if (status === "rejected") {
        yield* decide(id, { decision: "reject", version: 1, reason: "eval corpus: rejected in the meeting" }, EVAL_PERSON)
          .pipe(failOn(`reject ${rule.key}`))
      }
    }
    const keys = new Map([...ids].map(([key, id]) => [id, key]))
    return { ids, keys, sources: sources.length, rules: rules.length } satisfies Loaded
  })
