import { describe, expect, it } from "vitest"
import { parserUsage, unknownArgument } from "../../src/ops/cli-usage.js"

describe("the parser's refusals in the CLI's words", () => {
  it("the parser's unknown argument is named with the nearest option of the command's page", () => {
    expect(unknownArgument(["search", "--scop", "demo"], "--scop")).toBe("unknown option --scop (did you mean --scope?): groundnote search --help lists its options")
    expect(unknownArgument(["backup", "probe", "--jsn"], "--jsn")).toBe("unknown option --jsn (did you mean --json?): groundnote backup probe --help lists its options")
    expect(unknownArgument(["search", "--frobnicate=1"], "--frobnicate=1")).toBe("unknown option --frobnicate=1: groundnote search --help lists its options")
    expect(unknownArgument(["status", "extra"], "extra")).toBe("unknown argument: extra (groundnote status --help shows its usage)")
    expect(unknownArgument(["status", "--x\u001b[2J"], "--x\u001b[2J")).toBe("unknown option --x\\u001b[2J: groundnote status --help lists its options")
  })

  it("an option of the command given twice is said so, not suggested as itself", () => {
    expect(unknownArgument(["search", "--scope", "x", "--limit", "5", "--limit", "6"], "--limit"))
      .toBe("--limit is given more than once (groundnote search --help shows its usage)")
    expect(unknownArgument(["search", "--limit=5", "--limit=6"], "--limit=6")).toBe("--limit is given more than once (groundnote search --help shows its usage)")
  })

  it("each of the parser's sentences is one usage line; the last names the command's help page", () => {
    // @effect/cli's text for `grants create --right rea --label x --auth bearer`, verbatim
    const text = "Expected to find option: '--kind'\n\nExpected at least 1 value(s) for option: '--scope'\n\nExpected one of the following cases: read, propose, decide\n\n"
    expect(parserUsage(["grants", "create", "--right", "rea", "--label", "x", "--auth", "bearer"], text)).toEqual([
      "groundnote: usage: missing option --kind",
      "groundnote: usage: missing option --scope",
      "groundnote: usage: --right: rea is not one of read, propose, decide (did you mean read?) (groundnote grants create --help shows its usage)"
    ])
    expect(parserUsage(["search", "--scope", "x", "--limit", "abc"], "'abc' is not a integer\n\n"))
      .toEqual(["groundnote: usage: --limit: abc is not an integer (groundnote search --help shows its usage)"])
    expect(parserUsage(["search", "--limit=abc"], "'abc' is not a integer\n")).toEqual(["groundnote: usage: --limit: abc is not an integer (groundnote search --help shows its usage)"])
    expect(parserUsage(["restore", "--to"], "Expected a value following option: '--to'\n\n")).toEqual(["groundnote: usage: --to needs a value (groundnote restore --help shows its usage)"])
    expect(parserUsage(["grants", "create", "--kindd", "x"], "The flag '--kindd' is not recognized. Did you mean '--kind'?\n\n"))
      .toEqual(["groundnote: usage: unknown option --kindd (did you mean --kind?) (groundnote grants create --help shows its usage)"])
    expect(parserUsage(["status", "extra"], "Received unknown argument: 'extra'\n")).toEqual(["groundnote: usage: unknown argument: extra (groundnote status --help shows its usage)"])
  })

  it("a choice none of the values is near is listed; a value is shown terminal-safe", () => {
    expect(parserUsage(["grants", "create", "--kind", "robot"], "Expected one of the following cases: person, service\n"))
      .toEqual(["groundnote: usage: expected one of person, service (groundnote grants create --help shows its usage)"])
    expect(parserUsage(["search", "--limit", "1\u001b[2J"], "'1\u001b[2J' is not a integer\n"))
      .toEqual(["groundnote: usage: --limit: 1\\u001b[2J is not an integer (groundnote search --help shows its usage)"])
  })

  it("a value two options were given names neither; an option from argv is shown terminal-safe", () => {
    expect(parserUsage(["search", "--text", "abc", "--limit", "abc"], "'abc' is not a integer\n"))
      .toEqual(["groundnote: usage: abc is not an integer (groundnote search --help shows its usage)"])
    expect(parserUsage(["search", "--li\u001b[2Jmit=abc"], "'abc' is not a integer\n"))
      .toEqual(["groundnote: usage: --li\\u001b[2Jmit: abc is not an integer (groundnote search --help shows its usage)"])
  })

  it("a text that is not only the parser's sentences is not held back", () => {
    expect(parserUsage(["status"], "groundnote: ops-socket-unavailable: no service")).toBeNull()
    expect(parserUsage(["status"], "Expected to find option: '--kind'\n\nsomething else\n")).toBeNull()
    expect(parserUsage(["status"], "\n\n")).toBeNull()
  })
})
