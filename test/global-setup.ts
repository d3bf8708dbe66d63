/**
 * Before the suite: build dist/ (the e2e tests run the built CLI as an operator would); only
 * what changed since the last build is built again (tsconfig.build.json: incremental).
 * After the suite: the captured logs of the whole suite must contain no token, JWT, cookie,
 * test secret or source text.
 */
import { execFileSync } from "node:child_process"
import { existsSync, readFileSync, rmSync } from "node:fs"
import { join } from "node:path"

/** What must never be logged: bearer tokens, JWTs, session cookies, the suite's secrets, source text. */
export const FORBIDDEN_IN_LOGS: ReadonlyArray<[string, RegExp]> = [
  ["a bearer token", /gn_[A-Za-z0-9_-]{43}/],
  ["a JWT", /eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\./],
  ["a session cookie", /gn_session=[A-Za-z0-9_-]+\./],
  ["a test secret", /(?:^|[^a-z])(s{40}|o{40}|m{40}|a{40}|p{40})(?:$|[^a-z])/],
  ["source text", /Vor jeder Bestellung|Rechnungen der Müller GmbH zahlen/]
]

export const scanLog = (text: string): Array<string> =>
  FORBIDDEN_IN_LOGS.filter(([, re]) => re.test(text)).map(([what, re]) => `${what} (${String(re)}): ${re.exec(text)?.[0]?.slice(0, 12) ?? ""}…`)

export default function setup(): () => void {
  const root = join(import.meta.dirname, "..")
  // GROUNDNOTE_SKIP_BUILD=1: a targeted run of tests that do not start the built CLI
  if (process.env.GROUNDNOTE_SKIP_BUILD !== "1") execFileSync(process.execPath, [join(root, "node_modules", "typescript", "bin", "tsc"), "-b", join(root, "tsconfig.build.json")], {
    cwd: root,
    stdio: "inherit"
  })
  return () => {
    const file = process.env.GROUNDNOTE_SUITE_LOG
    if (file === undefined || !existsSync(file)) return
    const text = readFileSync(file, "utf8")
    rmSync(file, { force: true })
    const found = scanLog(text)
    if (found.length > 0) throw new Error(`the suite's logs contain what must never be logged:\n${found.join("\n")}`)
    console.log(`log scan: ${text.split("\n").length} captured log lines, no token, JWT, cookie, secret or source text`)
  }
}
