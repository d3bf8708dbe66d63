/**
 * Answers the read pool holds on the main thread: the bytes of a worker's answer, kept
 * with the stamps of each scope's file it was read under (search.ts ScopeResult.stamp: the lexical
 * index's and the content's, src/search/lexical/stamp-cache.ts). The same request (every field),
 * with the same states of stages b and c, on the same day (ages count to it), is answered from it
 * while the main thread's connection of every scope shows the same stamps (one read per scope):
 * no worker, no hop between threads. Only the search_id and stage a's duration (0: nothing was
 * searched) are new; the search_log row is written as for every search. An answer is held once
 * its request comes a second time (the first time only its key is noted, up to MAX_NOTED_KEYS):
 * a stream of requests each asked once (agents rephrasing) would otherwise keep every answer's
 * text alive for a while, and the main thread's garbage collector copied them (scavenges of
 * 11–13 ms every ~100 ms under 16 clients). At most MAX_HELD_ANSWERS answers (~32 KB each at 10k
 * rules), then it starts again. A held answer is its head, made anew, and the held tail's bytes
 * copied behind it: nothing is encoded but the head.
 */
import type { SearchRequest, StageState } from "../domain/search-schemas.js"
import { headJson, type RenderedSearch, utf8 } from "./rendered.js"

export const MAX_HELD_ANSWERS = 200
export const MAX_NOTED_KEYS = 2_000

export interface HeldAnswer {
  /** per scope: the stamps its file had when the answer was read */
  readonly stamps: Readonly<Record<string, string>>
  /** the answer's bytes after its head (rendered.ts tailAt) */
  readonly tail: Uint8Array
  readonly answer: Omit<RenderedSearch, "body" | "tailAt">
}

/** The key of a request: every field, the states of stages b and c per scope, and today in the zone. */
export const heldKey = (
  req: SearchRequest,
  states: { readonly b: Readonly<Record<string, StageState>>; readonly c: Readonly<Record<string, StageState>> },
  today: string
): string => JSON.stringify([req, states, today])

/** What of an answer may be held: every scope's stamp known (else nothing). */
const heldOf = (r: RenderedSearch): HeldAnswer | undefined => {
  const stamps: Record<string, string> = {}
  for (const s of r.perScope) {
    if (s.stamp === null) return undefined
    stamps[s.scope] = s.stamp
  }
  const { body, tailAt, ...answer } = r
  return { stamps, tail: body.subarray(tailAt), answer }
}

const noTime = (s: StageState): StageState => ({ ...s, duration_ms: 0 })

/** The held answer to a new request: its own search_id; stage a took no time. */
export const answerFrom = (h: HeldAnswer, searchId: string): RenderedSearch => {
  const stages = { ...h.answer.stages, a: noTime(h.answer.stages.a) }
  const head = utf8(headJson({ search_id: searchId, scopes: h.answer.perScope.map((s) => s.scope), stages }))
  const body = new Uint8Array(head.length + h.tail.length)
  body.set(head)
  body.set(h.tail, head.length)
  return {
    ...h.answer,
    body,
    tailAt: head.length,
    stages,
    perScope: h.answer.perScope.map((s) => ({ ...s, stages: { ...s.stages, a: noTime(s.stages.a) } }))
  }
}

/** A bounded map of held answers (emptied once it holds MAX_HELD_ANSWERS); offer holds an answer the second time its key comes. */
export const heldAnswers = () => {
  const answers = new Map<string, HeldAnswer>()
  const noted = new Set<string>()
  return {
    get: (key: string) => answers.get(key),
    offer: (key: string, answer: RenderedSearch) => {
      if (!noted.has(key)) {
        if (noted.size >= MAX_NOTED_KEYS) noted.clear()
        noted.add(key)
        return
      }
      const h = heldOf(answer)
      if (h === undefined) return
      if (answers.size >= MAX_HELD_ANSWERS) answers.clear()
      answers.set(key, h)
    },
    delete: (key: string) => answers.delete(key)
  }
}
