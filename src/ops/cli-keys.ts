/**
 * groundnote key create|list|add-recipient|rotate (gaps.md §12 R5): the recipients of encrypted
 * copies, over the ops socket like grants. create and rotate make the age X25519 key pair here, in
 * the CLI: the identity goes only to --out (mode 0600, never over an existing file, its path the
 * only thing printed on stdout), the recipient to the service. --instance instead of --scope
 * names the instance's key (the copies of ops.sqlite).
 */
import { rmSync } from "node:fs"
import { resolve } from "node:path"
import { Command, Options } from "@effect/cli"
import { Console, Effect, Option } from "effect"
import { makeKeyPair } from "../keys/keypair.js"
import { identityFileText, writeIdentityFile } from "../keys/write-identity.js"
import { jsonOption } from "./cli-commands.js"
import { CliError, printJson, terminalSafe, usage, withJsonError } from "./cli-output.js"
import { opsRequest, resolveOps } from "./ops-client.js"

interface KeyRow {
  readonly seq: number
  readonly scope: string | null
  readonly recipient: string
  readonly origin: string
  readonly label: string | null
  readonly added_at: string
  readonly retired_at: string | null
}

const scopeOption = Options.text("scope").pipe(Options.withDescription("a configured scope"), Options.optional)
const instanceOption = Options.boolean("instance").pipe(Options.withDescription("the instance's key (copies of ops.sqlite)"))
const labelOption = Options.text("label").pipe(Options.withDescription("a name for people"), Options.optional)
const outOption = Options.text("out").pipe(Options.withDescription("the new identity file (never overwritten)"))

/** --scope S or --instance, exactly one: the scope, or null for the instance. */
const keyScope = (scope: Option.Option<string>, instance: boolean) =>
  Option.isSome(scope) === instance
    ? Effect.fail(usage("name exactly one of --scope <s> and --instance"))
    : Effect.succeed(Option.getOrNull(scope))

const named = (scope: string | null): string => (scope === null ? "the instance" : `scope ${scope}`)

export const renderKey = (k: KeyRow): string =>
  terminalSafe(`${k.recipient}  ${k.scope ?? "(instance)"}  ${k.origin} ${k.added_at}${k.retired_at === null ? "" : `  retired ${k.retired_at}`}${k.label === null ? "" : `  ${k.label}`}`)

/** The key pair is made, the identity written to `out`, then `register` stores the recipient; a refusal removes the file again. */
const withNewIdentity = <A>(out: string, register: (recipient: string) => Effect.Effect<A, CliError>) =>
  Effect.gen(function*() {
    const pair = yield* makeKeyPair
    const path = resolve(out)
    yield* Effect.try({
      try: () => writeIdentityFile(path, identityFileText(pair.identity, pair.recipient, new Date().toISOString())),
      catch: (e) => {
        const code = typeof e === "object" && e !== null && "code" in e ? String((e as { code: unknown }).code) : "error"
        return new CliError({
          code: code === "EEXIST" ? "file-exists" : "file-unwritable",
          message: code === "EEXIST" ? `${path} exists: the identity is never written over a file; choose a new path` : `cannot write ${path} (${code})`
        })
      }
    })
    const answer = yield* register(pair.recipient).pipe(Effect.tapError(() => Effect.sync(() => rmSync(path, { force: true }))))
    return { path, recipient: pair.recipient, answer }
  })

const keyCreate = Command.make("create", {
  json: jsonOption, scope: scopeOption, instance: instanceOption, out: outOption, label: labelOption
}, ({ instance, json, label, out, scope }) =>
  Effect.gen(function*() {
    const s = yield* keyScope(scope, instance)
    const ops = yield* resolveOps(process.env, process.cwd())
    const made = yield* withNewIdentity(out, (recipient) =>
      opsRequest(ops, "keysAdd", { body: { scope: s, recipient, origin: "created", ...(Option.isSome(label) ? { label: label.value } : {}) } }))
    if (json) return yield* printJson({ file: made.path, key: made.answer })
    yield* Console.log(terminalSafe(made.path))
    yield* Console.error(terminalSafe(`new key of ${named(s)}: its recipient ${made.recipient} is stored; the identity is in the file above only: keep it off this host (docs/backup.md)`))
  }).pipe(withJsonError(json))
).pipe(Command.withDescription("Make an age key pair: the identity to --out (0600), the recipient to the service."))

const keyRotate = Command.make("rotate", {
  json: jsonOption, scope: scopeOption, instance: instanceOption, out: outOption, label: labelOption
}, ({ instance, json, label, out, scope }) =>
  Effect.gen(function*() {
    const s = yield* keyScope(scope, instance)
    const ops = yield* resolveOps(process.env, process.cwd())
    const made = yield* withNewIdentity(out, (recipient) =>
      opsRequest(ops, "keysRotate", { body: { scope: s, recipient, ...(Option.isSome(label) ? { label: label.value } : {}) } }))
    if (json) return yield* printJson({ file: made.path, ...(made.answer as object) })
    const retired = (made.answer as { readonly retired: ReadonlyArray<KeyRow> }).retired
    yield* Console.log(terminalSafe(made.path))
    yield* Console.error(terminalSafe(`new key of ${named(s)}: ${made.recipient}; retired ${retired.length === 0 ? "none" : retired.map((r) => r.recipient).join(", ")}. Copies made before stay readable with the old identity only: keep it.`))
  }).pipe(withJsonError(json))
).pipe(Command.withDescription("A new key pair for a scope; the recipients key create made before are retired."))

const keyAddRecipient = Command.make("add-recipient", {
  json: jsonOption, scope: scopeOption, instance: instanceOption, label: labelOption,
  recipient: Options.text("recipient").pipe(Options.withDescription("an age X25519 recipient, age1…"))
}, ({ instance, json, label, recipient, scope }) =>
  Effect.gen(function*() {
    const s = yield* keyScope(scope, instance)
    const ops = yield* resolveOps(process.env, process.cwd())
    const answer = yield* opsRequest(ops, "keysAdd", { body: { scope: s, recipient, origin: "added", ...(Option.isSome(label) ? { label: label.value } : {}) } })
    if (json) return yield* printJson(answer)
    yield* Console.error(`added ${renderKey(answer as KeyRow)}`)
  }).pipe(withJsonError(json))
).pipe(Command.withDescription("Encrypt every new copy of a scope also to someone's age recipient."))

const keyList = Command.make("list", { json: jsonOption }, ({ json }) =>
  Effect.gen(function*() {
    const ops = yield* resolveOps(process.env, process.cwd())
    const answer = (yield* opsRequest(ops, "keysList")) as ReadonlyArray<KeyRow>
    if (json) return yield* printJson(answer)
    yield* Console.error(answer.length === 0 ? "no keys: every copy is plaintext" : answer.map(renderKey).join("\n"))
  }).pipe(withJsonError(json))
).pipe(Command.withDescription("List every recipient, active and retired."))

export const key = Command.make("key").pipe(
  Command.withDescription("Keys of encrypted copies (age)."),
  Command.withSubcommands([keyCreate, keyList, keyAddRecipient, keyRotate])
)
