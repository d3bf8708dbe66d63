/** An unknown key of groundnote.json names the nearest known key of its object. */
import { Effect, Either } from "effect"
import { describe, expect, it } from "vitest"
import { parseConfigFile } from "../../src/config/file.js"
import { baseConfigJson } from "../support/env.js"

const problems = (json: unknown) => {
  const r = Effect.runSync(Effect.either(parseConfigFile(JSON.stringify(json), "g.json")))
  if (Either.isRight(r)) throw new Error("expected a refusal")
  return r.left
}

describe("did you mean …?", () => {
  it("names the nearest key of the object the unknown one is in, at every depth; a message of lines", () => {
    const base = baseConfigJson()
    const e = problems({
      ...base,
      serach: {},
      backup: { ...base.backup, directry: "/x" },
      scopes: [{ name: "sales", providers_allowed: [], rerankr: true }],
      search: { lexical: { features: { stemm: true, foo: true } } }
    })
    expect(e.code).toBe("config-invalid")
    expect(e.issues).toEqual(expect.arrayContaining([
      { path: "serach", message: "unknown key — did you mean search?" },
      { path: "backup.directry", message: "unknown key — did you mean directory?" },
      { path: "scopes[0].rerankr", message: "unknown key — did you mean reranker?" },
      { path: "search.lexical.features.stemm", message: "unknown key — did you mean stem?" },
      { path: "search.lexical.features.foo", message: "unknown key (remove it)" }
    ]))
    expect(e.message.split("\n")).toContain("  serach: unknown key — did you mean search?")
  })
})
