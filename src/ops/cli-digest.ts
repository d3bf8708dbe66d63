/**
 * groundnote approvals digest --since <day> [--json] (gaps.md §13 "Digest"): the ops socket's
 * GET /ops/digest (every configured scope) — what the approval policy adopted since the day,
 * what waits for a person, what is due for recheck. For a timer that mails it, the digest goes to
 * stdout: plain lines, or the JSON answer with --json. The CLI stays off the approval channel (AT6).
 */
import { Command, Options } from "@effect/cli"
import { Effect } from "effect"
import { decodeStrict } from "../contracts/decode.js"
import { DigestQuery, type DigestJson } from "../contracts/digest.js"
import { toErrorBody } from "../contracts/errors.js"
import { plural } from "../contracts/words.js"
import { jsonOption } from "./cli-commands.js"
import { CliError, printJson, sayAnswer, withJsonError } from "./cli-output.js"
import { opsRequest, resolveOps } from "./ops-client.js"

const refsLine = (refs: ReadonlyArray<string>): string => (refs.length === 0 ? "" : `: ${refs.join(", ")}`)

/** The digest in plain lines: per scope what was adopted, what waits and what is due for recheck (refs only). */
export const renderDigest = (d: DigestJson): string => {
  const lines = [`digest of ${d.instance} since ${d.since} (to ${d.today})`]
  for (const s of d.scopes) {
    if (!s.available) {
      lines.push(`${s.scope}: not available (${s.message ?? "locked or without a file"})`)
      continue
    }
    lines.push(`${s.scope}:`)
    lines.push(`  adopted by the approval policy: ${s.adopted.length}${refsLine(s.adopted)}`)
    lines.push(`  waiting for a person: ${plural(s.waiting.rules, "rule proposal")}, ${plural(s.waiting.structure, "structure change")}`)
    lines.push(`  due for recheck (still valid?): ${s.due_for_recheck.length}${refsLine(s.due_for_recheck)}`)
  }
  if (d.scopes.length === 0) lines.push("no scope is configured")
  return lines.join("\n")
}

export const approvalsDigest = Command.make("digest", {
  json: jsonOption,
  since: Options.text("since").pipe(Options.withDescription("the first day (YYYY-MM-DD, in the instance's zone)"))
}, ({ json, since }) =>
  Effect.gen(function*() {
    // the service's schema, client-side: the same 400 validation-failed naming since, before anything is sent
    yield* decodeStrict(DigestQuery, { since }, "query").pipe(
      Effect.mapError((e) => new CliError({ code: e.code, message: e.message, body: toErrorBody(e) })))
    const ops = yield* resolveOps(process.env, process.cwd())
    const answer = (yield* opsRequest(ops, "opsDigest", { query: { since } })) as DigestJson
    yield* json ? printJson(answer) : sayAnswer(renderDigest(answer))
  }).pipe(withJsonError(json)))
