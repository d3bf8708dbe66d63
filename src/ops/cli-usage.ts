/**
 * What the CLI says when @effect/cli refuses its arguments (exit 2). The parser prints its own
 * sentences ("Expected to find option: '--kind'", "'abc' is not a integer"), one paragraph each,
 * without naming the command; cli.ts holds them back and prints these lines instead: each problem
 * `groundnote: usage: …` in the CLI's words, the value's option named where argv shows it, and
 * the last line says which help page to read. A paragraph this file does not know is not held
 * back (it may be a command's own line), so nothing the parser says is lost.
 */
import { nearestKey } from "../contracts/nearest.js"
import { type CommandDoc, commandNamed, shownWord, wordsOf } from "./cli-help.js"

/** " (groundnote <command> --help shows its usage)", or nothing when argv names no command. */
const helpPage = (doc: CommandDoc | undefined): string => doc === undefined ? "" : ` (groundnote ${doc.path} --help shows its usage)`

/**
 * The parser's "Received unknown argument: '<arg>'" as the CLI's usage line: an option is named
 * with the nearest option of its command's help page and where to read them all; an option of the
 * command given twice is said so; a stray word is named as an argument. The parser has refused
 * already: the help page's options only suggest.
 */
export const unknownArgument = (args: ReadonlyArray<string>, arg: string): string => {
  const doc = commandNamed(wordsOf(args))
  const shown = shownWord(arg)
  if (!arg.startsWith("-")) return `unknown argument: ${shown}${helpPage(doc)}`
  const flags = (doc?.options ?? []).map(([flag]) => flag.split(" ")[0] ?? flag)
  const flag = arg.split("=")[0] ?? arg
  if (flags.includes(flag) && args.filter((a) => a === flag || a.startsWith(`${flag}=`)).length > 1) return `${flag} is given more than once${helpPage(doc)}`
  const near = nearestKey(flag, flags)
  return `unknown option ${shown}${near === null ? "" : ` (did you mean ${near}?)`}${doc === undefined ? "" : `: groundnote ${doc.path} --help lists its options`}`
}

/** Every option given a value in argv, as [option, value]: "--limit=abc" or "--limit abc". */
const optionValues = (args: ReadonlyArray<string>): Array<readonly [string, string]> => {
  const pairs: Array<readonly [string, string]> = []
  for (let i = 0; i < args.length; i++) {
    const a = args[i] ?? ""
    const before = args[i - 1] ?? ""
    const eq = a.indexOf("=")
    if (a.startsWith("-") && eq > 0) pairs.push([a.slice(0, eq), a.slice(eq + 1)])
    else if (!a.startsWith("-") && before.startsWith("-") && !before.includes("=")) pairs.push([before, a])
  }
  return pairs
}

/** The option `value` was given to in argv, if argv shows exactly one (terminal-safe). */
const optionOf = (args: ReadonlyArray<string>, value: string): string | undefined => {
  const options = new Set(optionValues(args).filter(([, v]) => v === value).map(([o]) => o))
  return options.size === 1 ? shownWord([...options][0] as string) : undefined
}

/** The option whose value in argv is not one of `choices` but near one: "--right: rea … (did you mean read?)". */
const choiceProblem = (args: ReadonlyArray<string>, list: string): string => {
  const choices = list.split(",").map((c) => c.trim()).filter((c) => c !== "")
  const near = optionValues(args).filter(([, v]) => !choices.includes(v)).flatMap(([flag, value]) => {
    const nearest = nearestKey(value, choices)
    return nearest === null ? [] : [`${shownWord(flag)}: ${shownWord(value)} is not one of ${choices.join(", ")} (did you mean ${nearest}?)`]
  })
  return near.length === 1 ? near[0] as string : `expected one of ${choices.join(", ")}`
}

const article = (word: string): string => /^[aeiou]/i.test(word) ? "an" : "a"

/** The parser's sentences this CLI says in its own words. */
const SENTENCES: ReadonlyArray<readonly [RegExp, (m: RegExpExecArray, args: ReadonlyArray<string>) => string]> = [
  [/^Expected to find option: '(.+)'$/, (m) => `missing option ${m[1]}`],
  [/^Expected at least (\d+) value\(s\) for option: '(.+)'$/, (m) => m[1] === "1" ? `missing option ${m[2]}` : `${m[2]} needs at least ${m[1]} values`],
  [/^Expected at most (\d+) value\(s\) for option: '(.+)'$/, (m) => `${m[2]} takes at most ${m[1]} value${m[1] === "1" ? "" : "s"}`],
  [/^Expected a value following option: '(.+)'$/, (m) => `${m[1]} needs a value`],
  [/^'([\s\S]*)' is not a (\w[\w ]*)$/, (m, args) => {
    const value = m[1] ?? ""
    const type = m[2] ?? ""
    const option = optionOf(args, value)
    return `${option === undefined ? "" : `${option}: `}${shownWord(value)} is not ${article(type)} ${type}`
  }],
  [/^Expected one of the following cases: (.+)$/, (m, args) => choiceProblem(args, m[1] ?? "")],
  [/^The flag '(.+)' is not recognized\. Did you mean '(.+)'\?$/, (m) => `unknown option ${shownWord(m[1] ?? "")} (did you mean ${m[2]}?)`],
  [/^Missing argument (.+)$/, (m) => `missing argument ${m[1]}`],
  [/^More than one reference to option '(.+)' detected$/, (m) => `${m[1]} is given more than once`]
]

const RECEIVED_UNKNOWN = /^Received unknown argument: '([\s\S]*)'$/

/**
 * The usage lines for what the parser printed (`text`, one paragraph a problem), or null when a
 * paragraph is not one of the parser's sentences (then the text is not held back). Each line
 * begins `groundnote: usage: `; the last names the command's help page.
 */
export const parserUsage = (args: ReadonlyArray<string>, text: string): ReadonlyArray<string> | null => {
  const paragraphs = text.split(/\n\s*\n/).map((p) => p.trim()).filter((p) => p !== "")
  if (paragraphs.length === 0) return null
  const unknown = paragraphs.length === 1 ? RECEIVED_UNKNOWN.exec(paragraphs[0] ?? "") : null
  if (unknown !== null) return [`groundnote: usage: ${unknownArgument(args, unknown[1] ?? "")}`]
  const problems: Array<string> = []
  for (const p of paragraphs) {
    const said = SENTENCES.map(([re, say]) => {
      const m = re.exec(p)
      return m === null ? null : say(m, args)
    }).find((s) => s !== null)
    if (said === undefined || said === null) return null
    problems.push(said)
  }
  const where = helpPage(commandNamed(wordsOf(args)))
  return problems.map((p, i) => `groundnote: usage: ${p}${i === problems.length - 1 ? where : ""}`)
}
