/**
 * Scanner for rendered model text (architecture.md §9): finds the response's one boundary, takes
 * every untrusted block out and returns what is left outside and what is inside. A text that uses
 * two boundaries, leaves a marker dangling or holds a raw marker character inside a block fails.
 */
import { UNTRUSTED_PREAMBLE } from "../../src/security/model-output.js"

export interface Scanned {
  readonly boundary: string | null
  readonly outside: string
  readonly blocks: ReadonlyArray<{ readonly label: string; readonly text: string }>
}

const MARKER_CHARS = /[\u27EA\u27EB\u300A\u300B\u226A\u226B\u2E28\u2E29\uFF5F\uFF60\u2985\u2986\u3018\u3019\u301A\u301B\u27E6\u27E7\u27E8\u27E9]/u
const INVISIBLE = /[\p{Cf}\p{Co}\u2028\u2029\u0085\r]/u

export const scanRendered = (full: string, preamble: "first" | "last" = "first"): Scanned => {
  const hasPreamble = preamble === "first" ? full.startsWith(UNTRUSTED_PREAMBLE) : full.trimEnd().endsWith(UNTRUSTED_PREAMBLE)
  const text = hasPreamble ? full.replace(UNTRUSTED_PREAMBLE, "") : full
  const ids = new Set([...text.matchAll(/⟪\/?gn:([^\s⟫]*)/g)].map((m) => m[1]))
  if (ids.size > 1) throw new Error(`more than one boundary: ${[...ids].join(", ")}`)
  const boundary = ids.size === 0 ? null : ([...ids][0] ?? null)
  if (boundary === null) {
    if (MARKER_CHARS.test(text)) throw new Error("a marker character outside any block")
    return { boundary, outside: text, blocks: [] }
  }
  if (!/^[0-9a-f]{16}$/.test(boundary)) throw new Error(`not a random boundary: ${boundary}`)
  const blocks: Array<{ label: string; text: string }> = []
  const re = new RegExp(`⟪gn:${boundary} untrusted ([^⟫]*)⟫([\\s\\S]*?)⟪/gn:${boundary}⟫`, "g")
  const outside = text.replace(re, (_m, label: string, inner: string) => {
    blocks.push({ label, text: inner })
    return "⟦block⟧"
  })
  if (outside.includes("⟪") || outside.includes("⟫")) throw new Error("a dangling marker outside the blocks")
  if (MARKER_CHARS.test(outside.replaceAll("⟦block⟧", ""))) throw new Error("a marker-like character outside the blocks")
  for (const b of blocks) {
    if (MARKER_CHARS.test(b.text)) throw new Error(`a raw marker character inside a block: ${b.text}`)
    if (INVISIBLE.test(b.text)) throw new Error(`an invisible character inside a block: ${JSON.stringify(b.text)}`)
    if (/(^|[^\p{L}\p{N}])\/?\s*gn\s*:/iu.test(b.text)) throw new Error(`a marker-like "gn:" inside a block: ${b.text}`)
  }
  if (!hasPreamble) throw new Error(`blocks without the preamble ${preamble}`)
  return { boundary, outside, blocks }
}
