/** The issues of a schema refusal (src/contracts/errors.ts): one per problem, each naming its path. */
import { Either, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { issuesOf } from "../../src/contracts/errors.js"
import { STRICT } from "../../src/contracts/schemas.js"

const Input = Schema.Struct({
  text: Schema.optional(Schema.String),
  source: Schema.optional(Schema.Struct({ link: Schema.optional(Schema.NullOr(Schema.String)) })),
  never: Schema.optional(Schema.Undefined)
})

const issues = (value: unknown) => {
  const decoded = Schema.decodeUnknownEither(Input, STRICT)(value)
  if (Either.isRight(decoded)) throw new Error("expected a refusal")
  return issuesOf(decoded.left)
}

describe("issuesOf", () => {
  it("names a wrong optional key once, without the 'Expected undefined' echo of its other member", () => {
    expect(issues({ text: 5 })).toEqual([{ path: "text", message: "Expected string, actual 5" }])
    expect(issues({ source: { link: 5 } }).map((i) => i.path)).toEqual(["source.link", "source.link"])
    expect(issues({ source: { link: 5 } }).map((i) => i.message)).toEqual(["Expected string, actual 5", "Expected null, actual 5"])
  })
  it("keeps 'Expected undefined' when it is the only problem at its path", () => {
    expect(issues({ never: 1 })).toEqual([{ path: "never", message: "Expected undefined, actual 1" }])
  })
})
