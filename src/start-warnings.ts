/**
 * What `groundnote serve` says once it listens and cannot be used yet: no scope file
 * and/or no active grant. One warning log line that names what is missing and the commands that
 * fix it (docs/cli.md: `scope create`, `grants create`), with the environment the CLI needs.
 * Loaded by serve like the other server modules.
 */
import { Effect } from "effect"
import type { AppConfigShape } from "./config/config.js"
import { OpsStore } from "./db/ops-store.js"
import { ScopeStore } from "./db/scope-store.js"

/** The text of the warning, or null when a scope file and an active grant exist. */
export const notReadyWarning = (o: {
  readonly dataDir: string
  readonly configured: ReadonlyArray<string>
  readonly created: ReadonlyArray<string>
  /** scopes locked at start (a lost file: its own error line says to restore it, not to create it) */
  readonly locked?: ReadonlyArray<string>
  readonly activeGrants: number
}): string | null => {
  const missingScopes = o.configured.filter((s) => !o.created.includes(s) && !(o.locked ?? []).includes(s))
  const noScope = o.created.length === 0 && missingScopes.length > 0
  const noGrant = o.activeGrants === 0
  if (!noScope && !noGrant) return null
  const example = o.created[0] ?? o.configured[0] ?? "<scope>"
  const steps = [
    ...(noScope ? missingScopes.map((s) => `npx groundnote scope create ${s}`) : []),
    ...(noGrant
      ? [`npx groundnote grants create --kind person --auth email --identity <your e-mail> --scope ${example} --right read --right decide`]
      : [])
  ]
  const what = [
    ...(noScope ? ["no scope file exists, so nothing can be stored or searched"] : []),
    ...(noGrant ? ["no active grant exists, so every credential is refused (401)"] : [])
  ].join(" and ")
  return `not ready for use: ${what}. Fix it with the service running (GROUNDNOTE_DATA_DIR=${o.dataDir} and GROUNDNOTE_OPS_TOKEN as for the service): ${steps.join(" && ")}`
}

/** Logs the warning once at start when it applies. */
export const warnWhenNotReady = (config: AppConfigShape) =>
  Effect.gen(function*() {
    const ops = yield* OpsStore
    const store = yield* ScopeStore
    const grants = yield* Effect.orDie(ops.listGrants())
    const states = yield* store.states
    const text = notReadyWarning({
      dataDir: config.env.dataDir,
      configured: states.map((s) => s.scope),
      created: states.filter((s) => s.created).map((s) => s.scope),
      locked: states.filter((s) => s.locked).map((s) => s.scope),
      activeGrants: grants.filter((g) => g.active).length
    })
    if (text !== null) yield* Effect.logWarning(text)
  })
