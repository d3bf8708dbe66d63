/**
 * The api commands (gaps.md §9): thin clients of /v1 through the route table, each request
 * decoded first with the service's own request schema (the same 400 validation-failed, with the
 * same issue paths, before anything is sent). Answers go to stdout: JSON with --json, plain text
 * for a person, or with --for-model framed for an AI model (renderResultForModel, as MCP).
 *
 * sources put|get, search, rules list|get|versions|provenance, proposals list, propose, feedback,
 * retract, approvals open (the bare number on stdout) and export (the approval channel's one route the CLI
 * may call: GET /v1/export/:scope with a person's Access token).
 */
import { readFileSync } from "node:fs"
import { homedir } from "node:os"
import { Args, Command, Options } from "@effect/cli"
import { Console, Effect, Option, type Schema } from "effect"
import { decodeStrict } from "../contracts/decode.js"
import { toErrorBody } from "../contracts/errors.js"
import { ListProposalsInput, ProposalDraft, RetractInput } from "../domain/proposal-schemas.js"
import { ListRulesInput, ReadRuleInput, RuleIdInput, ScopeInput } from "../domain/rule-schemas.js"
import { FeedbackInput, FeedbackRequest, type SearchResponse, SearchRequest } from "../domain/search-schemas.js"
import { parseInclude, ReadSourceInput, SourceRequest } from "../domain/source-schemas.js"
import { toCompact } from "../search/compact.js"
import { jsonOption } from "./cli-commands.js"
import { apiDownload, apiRequest } from "./cli-api.js"
import { approvalsDigest } from "./cli-digest.js"
import { apiEndpoint, type Endpoint, exportEndpoint } from "./cli-credentials.js"
import { CliError, cliError, printJson, say, sayAnswer, showAnswer, stderrIsTty, terminalSafe, usage, withJsonError } from "./cli-output.js"

const uid = (): number | undefined => process.getuid?.()
const api = (): Effect.Effect<Endpoint, CliError> => apiEndpoint(process.env, homedir(), uid())

/** The service's schema, client-side: the same ErrorBody the service would answer (400 validation-failed). */
export const validate = <A, I>(schema: Schema.Schema<A, I>, value: unknown, what: string): Effect.Effect<A, CliError> =>
  decodeStrict(schema, value, what).pipe(Effect.mapError((e) => new CliError({ code: e.code, message: e.message, body: toErrorBody(e) })))

const notJson = (where: string, why: string): CliError =>
  new CliError({
    code: "validation-failed",
    message: `${where} is not valid JSON (${why})`,
    body: { error: "validation-failed", message: `${where} is not valid JSON (${why})`, issues: [{ path: "(root)", message: "not valid JSON" }] }
  })

/** The JSON of --body <file> ("-": stdin). */
export const readBody = (file: string): Effect.Effect<unknown, CliError> =>
  Effect.suspend(() => {
    let text: string
    try {
      text = readFileSync(file === "-" ? 0 : file, "utf8")
    } catch (e) {
      const code = typeof e === "object" && e !== null && "code" in e ? String((e as { code: unknown }).code) : "error"
      return Effect.fail(cliError("body-unreadable", `cannot read ${file === "-" ? "stdin" : file} (${code})`))
    }
    try {
      return Effect.succeed(JSON.parse(text.startsWith("\uFEFF") ? text.slice(1) : text) as unknown)
    } catch (e) {
      return Effect.fail(notJson(file === "-" ? "stdin" : file, e instanceof Error ? e.message.slice(0, 120) : "parse error"))
    }
  })

const forModelOption = Options.boolean("for-model").pipe(
  Options.withDescription("Print the answer for an AI model: the preamble, foreign text in ⟪gn:…⟫ blocks (as MCP answers).")
)
const bodyOption = Options.text("body").pipe(Options.withDescription("a JSON file (- reads stdin)"))
const scopeOption = Options.text("scope").pipe(Options.withDescription("the scope"))
const limitOption = Options.integer("limit").pipe(Options.withDescription("how many (1-200, default 100)"), Options.optional)
const afterOption = Options.text("after").pipe(Options.withDescription("the next page after this rule id"), Options.optional)

const opt = <A>(o: Option.Option<A>): A | undefined => Option.getOrUndefined(o)

/** Only the defined entries (an object for the schemas, which refuse undefined). */
const defined = <T extends Record<string, unknown>>(o: T): Partial<T> =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>

/**
 * An api call with --json handling: `prepare` reads and validates the request (usage and
 * validation errors come before the credentials are even looked at), `send` sends it, `human`
 * shows the answer (stdout) when there is no --json.
 */
const call = <P, E>(
  json: boolean,
  prepare: Effect.Effect<P, E>,
  send: (endpoint: Endpoint, prepared: P) => Effect.Effect<unknown, CliError>,
  human: (answer: unknown) => Effect.Effect<void>
): Effect.Effect<void, CliError | E> =>
  Effect.gen(function*() {
    const prepared = yield* prepare
    const endpoint = yield* api()
    const answer = yield* send(endpoint, prepared)
    yield* json ? printJson(answer) : human(answer)
  }).pipe(withJsonError(json))

// ---------------------------------------------------------------------------------------------
// sources

const sourcesPut = Command.make("put", { json: jsonOption, forModel: forModelOption, body: bodyOption }, ({ body, forModel, json }) =>
  call(json, Effect.tap(readBody(body), (value) => validate(SourceRequest, value, "source")),
    (ep, value) => apiRequest(ep, "sourcesPut", { body: value, timeoutMs: 120_000 }),
    (a) => showAnswer(forModel, a, "sources put: the service stored the source")))

const sourcesGet = Command.make("get", {
  json: jsonOption,
  forModel: forModelOption,
  id: Args.text({ name: "id" }).pipe(Args.withDescription("the source id, e.g. mail:<message-id>")),
  scope: scopeOption,
  include: Options.text("include").pipe(Options.withDescription("text and/or attachments, comma-separated"), Options.optional)
}, ({ forModel, id, include, json, scope }) =>
  call(json,
    Effect.gen(function*() {
      const q = yield* validate(ReadSourceInput, defined({ id, scope, include: opt(include) }), "query")
      if (parseInclude(q.include) === null) {
        return yield* new CliError({
          code: "validation-failed",
          message: "include is a comma list of text and attachments, each at most once",
          body: { error: "validation-failed", message: "include is a comma list of text and attachments, each at most once", issues: [{ path: "include", message: "text | attachments, each at most once" }] }
        })
      }
      return q
    }),
    (ep, q) => apiRequest(ep, "sourcesGet", { params: { id }, query: { scope, include: q.include } }),
    (a) => showAnswer(forModel, a, "sources get")))

export const sources = Command.make("sources").pipe(Command.withSubcommands([sourcesPut, sourcesGet]))

// ---------------------------------------------------------------------------------------------
// search and feedback

const RELATION_FLAG = /^([a-z]+):(.+)$/s

const search = Command.make("search", {
  json: jsonOption,
  forModel: forModelOption,
  text: Options.text("text").pipe(Options.withDescription("the question or text"), Options.optional),
  terms: Options.text("term").pipe(Options.withDescription("a search term (repeat)"), Options.repeated),
  scopes: Options.text("scope").pipe(Options.withDescription("a scope (repeat)"), Options.repeated),
  crossScope: Options.boolean("cross-scope").pipe(Options.withDescription("allow more than one scope")),
  asOf: Options.text("as-of").pipe(Options.withDescription("YYYY-MM-DD"), Options.optional),
  includeProposals: Options.boolean("include-proposals").pipe(Options.withDescription("also proposals")),
  limit: Options.integer("limit").pipe(Options.withDescription("1-50 bundles"), Options.optional),
  relation: Options.text("relation").pipe(Options.withDescription("<kind>:<name>"), Options.optional),
  entity: Options.text("entity").pipe(Options.withDescription("an entity id"), Options.optional),
  body: Options.text("body").pipe(Options.withDescription("the SearchRequest as a JSON file"), Options.optional)
}, (o) =>
  call(o.json,
    Effect.gen(function*() {
      const flags = Option.isSome(o.text) || o.terms.length > 0 || o.scopes.length > 0 || o.crossScope || Option.isSome(o.asOf) ||
        o.includeProposals || Option.isSome(o.limit) || Option.isSome(o.relation) || Option.isSome(o.entity)
      if (Option.isSome(o.body) && flags) return yield* usage("give either --body <file> or the search options, not both")
      let request: unknown
      if (Option.isSome(o.body)) {
        request = yield* readBody(o.body.value)
      } else {
        if (o.scopes.length === 0) return yield* usage("--scope <s> is missing (repeat it for more scopes, with --cross-scope)")
        if (Option.isNone(o.text) && o.terms.length === 0) return yield* usage("give --text <t> or at least one --term <w>")
        const relation = opt(o.relation)
        const m = relation === undefined ? null : RELATION_FLAG.exec(relation)
        if (relation !== undefined && m === null) return yield* usage("--relation is <kind>:<name>, e.g. customer:Müller GmbH")
        request = defined({
          scopes: o.scopes,
          text: opt(o.text),
          terms: o.terms.length === 0 ? undefined : o.terms,
          cross_scope: o.crossScope ? true : undefined,
          as_of: opt(o.asOf),
          include_proposals: o.includeProposals ? true : undefined,
          limit: opt(o.limit),
          relation: m === null ? undefined : { kind: m[1], name: m[2] },
          entity: opt(o.entity)
        })
      }
      yield* validate(SearchRequest, request, "search")
      return request
    }),
    (ep, request) => apiRequest(ep, "search", { body: request }),
    (a) => {
      const r = a as SearchResponse
      return showAnswer(o.forModel, toCompact(r), `search ${r.search_id}: ${r.bundles.length} bundle(s) in ${r.scopes.join(", ")}`)
    }))

const feedback = Command.make("feedback", {
  json: jsonOption,
  searchId: Args.text({ name: "search-id" }).pipe(Args.withDescription("the search_id of the search")),
  relevant: Options.text("relevant").pipe(Options.withDescription("a bundle's ref that helped (repeat)"), Options.repeated),
  irrelevant: Options.text("irrelevant").pipe(Options.withDescription("a bundle's ref that did not (repeat)"), Options.repeated),
  missing: Options.text("missing").pipe(Options.withDescription("a rule ref the search should have found (repeat)"), Options.repeated)
}, ({ irrelevant, json, missing, relevant, searchId }) =>
  call(json,
    Effect.gen(function*() {
      const body = {
        bundles: [...relevant.map((ref) => ({ ref, verdict: "relevant" })), ...irrelevant.map((ref) => ({ ref, verdict: "irrelevant" }))],
        missing
      }
      if (body.bundles.length + missing.length === 0) return yield* usage("give at least one --relevant, --irrelevant or --missing ref")
      yield* validate(FeedbackInput, { search_id: searchId, ...body }, "feedback")
      yield* validate(FeedbackRequest, body, "feedback")
      return body
    }),
    (ep, body) => apiRequest(ep, "feedback", { params: { search_id: searchId }, body }),
    (a) => sayAnswer(`feedback recorded: ${String((a as { recorded?: unknown }).recorded ?? "?")} verdict(s)`)))

// ---------------------------------------------------------------------------------------------
// rules and proposals

const ruleId = Args.text({ name: "rule-id" }).pipe(Args.withDescription("e.g. sales-0001"))

const rulesList = Command.make("list", {
  json: jsonOption,
  forModel: forModelOption,
  scope: scopeOption,
  status: Options.choice("status", ["proposed", "confirmed", "superseded"]).pipe(Options.optional),
  relation: Options.text("relation").pipe(Options.withDescription("<customer|product|supplier>:<name>"), Options.optional),
  limit: limitOption,
  after: afterOption
}, ({ after, forModel, json, limit, relation, scope, status }) =>
  call(json,
    validate(ListRulesInput, defined({ scope, status: opt(status), relation: opt(relation), limit: opt(limit), after: opt(after) }), "query"),
    (ep) => apiRequest(ep, "rulesList", {
      query: { scope, status: opt(status), relation: opt(relation), limit: Option.match(limit, { onNone: () => undefined, onSome: String }), after: opt(after) }
    }),
    (a) => showAnswer(forModel, a, `rules of ${scope}`)))

const rulesGet = Command.make("get", {
  json: jsonOption,
  forModel: forModelOption,
  id: ruleId,
  asOf: Options.text("as-of").pipe(Options.withDescription("YYYY-MM-DD"), Options.optional),
  includeProposals: Options.boolean("include-proposals")
}, ({ asOf, forModel, id, includeProposals, json }) =>
  call(json,
    validate(ReadRuleInput, defined({ id, as_of: opt(asOf), include_proposals: includeProposals ? true : undefined }), "query"),
    (ep) => apiRequest(ep, "rulesGet", { params: { id }, query: { as_of: opt(asOf), include_proposals: includeProposals ? "true" : undefined } }),
    (a) => showAnswer(forModel, a, `rule ${id}`)))

const rulesVersions = Command.make("versions", { json: jsonOption, forModel: forModelOption, id: ruleId }, ({ forModel, id, json }) =>
  call(json, validate(RuleIdInput, { id }, "path"), (ep) => apiRequest(ep, "rulesVersions", { params: { id } }),
    (a) => showAnswer(forModel, a, `versions of ${id}`)))

const rulesProvenance = Command.make("provenance", { json: jsonOption, forModel: forModelOption, id: ruleId }, ({ forModel, id, json }) =>
  call(json, validate(RuleIdInput, { id }, "path"), (ep) => apiRequest(ep, "rulesProvenance", { params: { id } }),
    (a) => showAnswer(forModel, a, `provenance of ${id}`)))

export const rules = Command.make("rules").pipe(Command.withSubcommands([rulesList, rulesGet, rulesVersions, rulesProvenance]))

const proposalsList = Command.make("list", { json: jsonOption, forModel: forModelOption, scope: scopeOption, limit: limitOption, after: afterOption }, ({ after, forModel, json, limit, scope }) =>
  call(json,
    validate(ListProposalsInput, defined({ scope, limit: opt(limit), after: opt(after) }), "query"),
    (ep) => apiRequest(ep, "proposalsList", {
      query: { scope, limit: Option.match(limit, { onNone: () => undefined, onSome: String }), after: opt(after) }
    }),
    (a) => showAnswer(forModel, a, `open proposals of ${scope}`)))

/** retract: the policy's adoption taken back (confirmed → superseded), while no person has confirmed or reviewed it. */
export const retract = Command.make("retract", {
  json: jsonOption,
  forModel: forModelOption,
  id: ruleId,
  reason: Options.text("reason").pipe(Options.withDescription("why the adoption is taken back"))
}, ({ forModel, id, json, reason }) =>
  call(json, validate(RetractInput, { id, reason }, "retract"), (ep) => apiRequest(ep, "rulesRetract", { params: { id }, body: { reason } }),
    (a) => showAnswer(forModel, a, `retract ${id}: the rule is superseded from today`)))

export const proposals = Command.make("proposals").pipe(Command.withSubcommands([proposalsList]))

export const propose = Command.make("propose", { json: jsonOption, forModel: forModelOption, body: bodyOption }, ({ body, forModel, json }) =>
  call(json, Effect.tap(readBody(body), (value) => validate(ProposalDraft, value, "proposal")),
    (ep, value) => apiRequest(ep, "propose", { body: value }),
    (a) => showAnswer(forModel, a, "propose: the proposal waits for a person (approval_url)")))

// ---------------------------------------------------------------------------------------------
// approvals open

interface StatusScope {
  readonly scope: string
  readonly available: boolean
  readonly rules: { readonly proposed: number } | null
  /** confirmed rules past recheck_after_days (GET /v1/status) */
  readonly due_for_recheck?: number | null
}

export interface OpenItems {
  /** items waiting for a person: open proposals plus pending structure changes (the bare number) */
  readonly open: number
  /** confirmed rules due for recheck ("still valid?"): not counted in open */
  readonly due_for_recheck: number
  readonly scopes: ReadonlyArray<{
    readonly scope: string
    readonly available: boolean
    readonly proposals: number | null
    readonly structure: number | null
    readonly due_for_recheck: number | null
  }>
}

const approvalsOpen = Command.make("open", {
  json: jsonOption,
  scope: Options.text("scope").pipe(Options.withDescription("only this scope"), Options.optional)
}, ({ json, scope }) =>
  Effect.gen(function*() {
    if (Option.isSome(scope)) yield* validate(ScopeInput, { scope: scope.value }, "query")
    const ep = yield* api()
    const status = (yield* apiRequest(ep, "apiStatus")) as { readonly scopes: ReadonlyArray<StatusScope> }
    const wanted = Option.isSome(scope) ? status.scopes.filter((s) => s.scope === scope.value) : status.scopes
    if (Option.isSome(scope) && wanted.length === 0) {
      return yield* cliError("scope-not-allowed", `scope ${scope.value} is not in this grant's scopes`)
    }
    const rows: Array<OpenItems["scopes"][number]> = []
    for (const s of wanted) {
      if (!s.available || s.rules === null) {
        rows.push({ scope: s.scope, available: false, proposals: null, structure: null, due_for_recheck: null })
        continue
      }
      const structure = (yield* apiRequest(ep, "structureList", { query: { scope: s.scope } })) as { readonly pending: ReadonlyArray<unknown> }
      rows.push({ scope: s.scope, available: true, proposals: s.rules.proposed, structure: structure.pending.length, due_for_recheck: s.due_for_recheck ?? 0 })
    }
    const out: OpenItems = {
      open: rows.reduce((n, r) => n + (r.proposals ?? 0) + (r.structure ?? 0), 0),
      due_for_recheck: rows.reduce((n, r) => n + (r.due_for_recheck ?? 0), 0),
      scopes: rows
    }
    if (json) return yield* printJson(out)
    yield* Console.log(String(out.open))
    yield* say(rows.map((r) => r.available
      ? `${r.scope}: ${r.proposals ?? 0} proposal(s), ${r.structure ?? 0} structure change(s), ${r.due_for_recheck ?? 0} due for recheck`
      : `${r.scope}: not available (locked or without a file): not counted`).join("\n"))
  }).pipe(withJsonError(json)))

export const approvals = Command.make("approvals").pipe(Command.withSubcommands([approvalsOpen, approvalsDigest]))

// ---------------------------------------------------------------------------------------------
// export

export const exportCommand = Command.make("export", {
  json: jsonOption,
  scope: Args.text({ name: "scope" }).pipe(Args.withDescription("the scope")),
  out: Options.text("out").pipe(Options.withDescription("the file to write (never overwritten)"), Options.optional)
}, ({ json, out, scope }) =>
  Effect.gen(function*() {
    yield* validate(ScopeInput, { scope }, "path")
    const ep = yield* exportEndpoint(process.env, homedir(), uid())
    const tty = stderrIsTty()
    const done = yield* apiDownload(ep, "exportScope", {
      params: { scope },
      target: Option.match(out, { onNone: () => null, onSome: (o) => (o.startsWith("/") ? o : `${process.cwd()}/${o}`) }),
      fallbackName: `${scope}-export.tar.gz`,
      cwd: process.cwd(),
      ...(tty ? { onBytes: (n: number) => process.stderr.write(`\r\u001b[Kexport ${scope}… ${(n / 1024 / 1024).toFixed(1)} MB`) } : {})
    }).pipe(Effect.ensuring(Effect.sync(() => (tty ? process.stderr.write("\r\u001b[K") : true))))
    if (json) return yield* printJson(done)
    yield* sayAnswer(`wrote ${terminalSafe(done.file)} (${done.bytes} bytes, sha256 ${done.sha256})`)
  }).pipe(withJsonError(json)))

export const apiCommands = [sources, search, rules, proposals, propose, feedback, retract, approvals, exportCommand] as const
