/**
 * The demo data dir for a first look (`groundnote serve --demo`, `npm start`): a config, dev
 * secrets in an env file of mode 0600, a person grant for the dev e-mail, a service grant (its
 * token kept in the same env file), one scope with a few sources and proposals, and one rule the
 * demo person confirms through the approval channel as a person would (sign in, post the
 * decision form), so a first plain search finds something. A second start reuses everything; on
 * another GROUNDNOTE_PORT the demo's public_url and demo.env's GROUNDNOTE_URL follow the port.
 */
import { randomBytes } from "node:crypto"
import { chmodSync, existsSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { Effect } from "effect"
import { csrfToken } from "./auth/csrf.js"
import { DEFAULT_PORT } from "./config/env.js"
import { ensurePrivateDir } from "./db/files.js"
import { OpsStore } from "./db/ops-store.js"
import { ScopeStore } from "./db/scope-store.js"
import { intake } from "./domain/intake.js"
import type { ProposalRequest } from "./domain/proposal-schemas.js"
import { storeSource } from "./domain/sources.js"
import { createEntity } from "./graph/entities.js"
import { proposeLink } from "./graph/links.js"

export const DEMO_DIR = "./demo-data"
export const DEMO_EMAIL = "demo@example.com"
export const DEMO_SCOPE = "demo"

const secret = (): string => randomBytes(32).toString("base64url")

export interface DemoEnv {
  readonly dataDir: string
  readonly fresh: boolean
}

/** The port serve listens on (GROUNDNOTE_PORT, default 8787); null when it is invalid (the start refuses it). */
const servedPort = (text: string | undefined): number | null => {
  if (text === undefined || text === "") return DEFAULT_PORT
  const n = /^\d{1,5}$/.test(text) ? Number(text) : Number.NaN
  return Number.isInteger(n) && n >= 1 && n <= 65535 ? n : null
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"])
const OLD_DEADMAN_PLACEHOLDER = "http://127.0.0.1:9/deadman"

/** Writes `text` over `path` through a new 0600 file beside it and a rename. */
const replaceFile = (path: string, text: string): void => {
  const tmp = `${path}.tmp-${randomBytes(4).toString("hex")}`
  writeFileSync(tmp, text, { mode: 0o600, flag: "wx" })
  renameSync(tmp, path)
}

/**
 * The demo's public_url (an http URL on a loopback host) and demo.env's GROUNDNOTE_URL take the
 * port serve listens on, so sign-in (its origin check) and the CLI reach this start. A
 * public_url the operator pointed elsewhere, or a config that does not parse, stays as it is.
 * The placeholder dead-man URL of earlier demos becomes null.
 */
const updateDemoConfig = (configPath: string, envFile: string, port: number): void => {
  let config: Record<string, unknown>
  try {
    config = JSON.parse(readFileSync(configPath, "utf8")) as Record<string, unknown>
  } catch {
    return
  }
  if (typeof config !== "object" || config === null || typeof config.public_url !== "string") return
  let url: URL
  try {
    url = new URL(config.public_url)
  } catch {
    return
  }
  // earlier demos wrote a dead-man URL nobody serves (port 9): now null, as a new demo writes it
  const backup = config.backup as Record<string, unknown> | null | undefined
  const placeholder = typeof backup === "object" && backup !== null && backup.deadman_url === OLD_DEADMAN_PLACEHOLDER
  const follow = url.protocol === "http:" && LOOPBACK.has(url.hostname) && url.port !== String(port)
  if (!placeholder && !follow) return
  if (follow) url.port = String(port)
  const followed = follow ? url.origin : config.public_url
  replaceFile(configPath, `${JSON.stringify({ ...config, public_url: followed, ...(placeholder ? { backup: { ...backup, deadman_url: null } } : {}) }, null, 2)}\n`)
  if (!follow || !existsSync(envFile)) return
  const kept = readFileSync(envFile, "utf8")
  const updated = kept.replace(/^GROUNDNOTE_URL=.*$/m, `GROUNDNOTE_URL=${followed}`)
  if (updated !== kept) replaceFile(envFile, updated)
}

/**
 * Creates the demo dir (0700) with groundnote.json and demo.env on the first start and puts the
 * demo environment into `env` where the caller has not set a value.
 */
export const prepareDemoDir = (env: Record<string, string | undefined>, cwd: string): DemoEnv => {
  const dataDir = resolve(cwd, env.GROUNDNOTE_DATA_DIR ?? DEMO_DIR)
  const fresh = !existsSync(join(dataDir, "demo.env"))
  ensurePrivateDir(dataDir)
  chmodSync(dataDir, 0o700)
  // the demo's backup directory (outside the data dir, 0700), so `npx groundnote backup run` works on it
  const backups = resolve(dataDir, "..", "demo-backups")
  ensurePrivateDir(backups)
  chmodSync(backups, 0o700)
  const port = servedPort(env.GROUNDNOTE_PORT)
  const configPath = join(dataDir, "groundnote.json")
  if (existsSync(configPath)) {
    // a later start on another port (what port-in-use advises): the demo's own config follows it
    if (port !== null && (env.GROUNDNOTE_CONFIG === undefined || resolve(cwd, env.GROUNDNOTE_CONFIG) === configPath)) updateDemoConfig(configPath, join(dataDir, "demo.env"), port)
  } else {
    writeFileSync(configPath, `${JSON.stringify({
      instance: "demo",
      zone: "Europe/Berlin",
      public_url: `http://127.0.0.1:${port ?? DEFAULT_PORT}`,
      scopes: [{ name: DEMO_SCOPE, providers_allowed: [] }],
      search: {},
      // no dead-man service on a first look: backup nightly skips the ping and says so
      backup: { kind: "copy", directory: backups, deadman_url: null }
    }, null, 2)}\n`, { mode: 0o600 })
  }
  const envFile = join(dataDir, "demo.env")
  if (fresh) {
    const lines = [
      "GROUNDNOTE_AUTH_MODE=dev-token",
      `GROUNDNOTE_SESSION_SECRET=${secret()}`,
      `GROUNDNOTE_OPS_TOKEN=${secret()}`,
      `GROUNDNOTE_DEV_MCP_TOKEN=${secret()}`,
      `GROUNDNOTE_DEV_APPROVAL_TOKEN=${secret()}`,
      `GROUNDNOTE_DEV_API_TOKEN=${secret()}`,
      `GROUNDNOTE_DEV_EMAIL=${DEMO_EMAIL}`,
      "# the ops CLI (npx groundnote status, backup, doctor, grants …) reads the data dir, the config and GROUNDNOTE_OPS_TOKEN",
      `GROUNDNOTE_DATA_DIR=${dataDir}`,
      `GROUNDNOTE_CONFIG=${configPath}`
    ]
    writeFileSync(envFile, `${lines.join("\n")}\n`, { mode: 0o600 })
  }
  for (const line of readFileSync(envFile, "utf8").split("\n")) {
    if (line.startsWith("#")) continue
    const eq = line.indexOf("=")
    if (eq > 0 && env[line.slice(0, eq)] === undefined) env[line.slice(0, eq)] = line.slice(eq + 1)
  }
  env.GROUNDNOTE_DATA_DIR = dataDir
  env.GROUNDNOTE_CONFIG ??= configPath
  env.GROUNDNOTE_HOST ??= "127.0.0.1"
  return { dataDir, fresh }
}

const MAIL = [
  "Hallo zusammen,",
  "",
  "ab sofort gilt: Vor jeder Bestellung schwarzer Hakenleisten (RAL 9005) fragen wir beim Lieferanten",
  "die aktuelle Lieferzeit an. Ohne schriftliche Bestätigung keine Bestellung.",
  "",
  "Rechnungen der Müller GmbH zahlen wir innerhalb von 30 Tagen netto.",
  "",
  "Viele Grüße",
  "Maria"
].join("\n")

/** What the first start seeded: the feeder's bearer token (shown once) and the rule the demo person confirms. */
export interface DemoSeed {
  readonly feederToken: string | null
  readonly confirmRuleId: string
}

/** Seeds grants, the scope and a few sources and proposals; null when the dir was seeded before. */
export const seedDemo = Effect.gen(function*() {
  const ops = yield* OpsStore
  const store = yield* ScopeStore
  if ((yield* ops.listGrants()).length > 0) return null
  const person = yield* ops.createGrant({
    kind: "person", auth: "email", identity: DEMO_EMAIL, scopes: [DEMO_SCOPE], rights: ["read", "propose", "decide"], label: "demo person"
  })
  const service = yield* ops.createGrant({
    kind: "service", auth: "bearer", scopes: [DEMO_SCOPE], rights: ["read", "propose"], label: "demo feeder"
  })
  yield* store.create(DEMO_SCOPE)
  yield* storeSource({
    scope: DEMO_SCOPE,
    source: {
      kind: "mail", id: "mail:<demo-1@example.com>", title: "Bestellungen und Zahlungen", occurred_at: "2026-03-12T09:15:00Z",
      sender: "maria@example.com", thread: null, link: null
    },
    text: MAIL,
    attachments: [{ filename: "preisliste-2026.pdf", media_type: "application/pdf", size: 48213, external: null, text: "Preisliste 2026", text_origin: "ocr" }]
  }, service.id)
  yield* storeSource({
    scope: DEMO_SCOPE,
    source: { kind: "jamie", id: "jamie:weekly-2026-03-16", title: "Weekly sales", occurred_at: "2026-03-16T08:00:00Z", sender: null, link: "https://jamie.example.com/m/demo" },
    segments: [
      { start_s: 0, speaker: "Tom", text: "Good morning, let's go through the open points." },
      { start_s: 95, speaker: "Maria", text: "Customers in Austria get their invoices in English from now on." },
      { start_s: 180, speaker: "Tom", text: "Agreed. And samples are only sent after the order is confirmed." },
      { start_s: 240, speaker: "Maria", text: "Offers to new customers are valid for 14 days, please put that in every offer." }
    ],
    attachments: []
  }, service.id)
  const by = { grantId: person.id, channel: "mcp" as const }
  // every proposal comes in through intake (secret scan, classification), as over MCP
  const propose = (req: ProposalRequest, who: typeof by) => Effect.map(intake(req, { ...who, requestId: null }), (r) => r.created)
  yield* propose({
    scope: DEMO_SCOPE, kind: "rule", statement: "Ask the supplier for the delivery time before ordering black hook rails (RAL 9005)",
    source: { kind: "mail", id: "mail:<demo-1@example.com>", quote: "Vor jeder Bestellung schwarzer Hakenleisten (RAL 9005) fragen wir beim Lieferanten die aktuelle Lieferzeit an", link: null },
    said_at: "2026-03-12T09:15:00Z", speaker: "Maria", relations: [{ kind: "product", name: "Hakenleiste schwarz", ref: null }],
    keywords: ["Lieferzeit", "Hakenleiste", "RAL 9005"], valid_from: "2026-03-12", supersedes: null
  }, by)
  const invoiceRule = yield* propose({
    scope: DEMO_SCOPE, kind: "rule", statement: "Invoices of Müller GmbH are paid within 30 days net",
    source: { kind: "mail", id: "mail:<demo-1@example.com>", quote: "Rechnungen der Müller GmbH zahlen wir innerhalb von 30 Tagen netto", link: null },
    said_at: "2026-03-12T09:15:00Z", speaker: "Maria", relations: [{ kind: "supplier", name: "Müller GmbH", ref: null }],
    keywords: ["Zahlungsziel", "Rechnung"], valid_from: "2026-03-12", supersedes: null
  }, by)
  yield* propose({
    scope: DEMO_SCOPE, kind: "rule", statement: "Customers in Austria receive their invoices in English",
    source: { kind: "jamie", id: "jamie:weekly-2026-03-16", timestamp_s: 95, quote: "Customers in Austria get their invoices in English from now on", link: "https://jamie.example.com/m/demo" },
    said_at: "2026-03-16T08:01:35Z", speaker: "Maria", relations: [], keywords: ["Rechnung", "Österreich"], valid_from: "2026-03-16", supersedes: null
  }, by)
  // the rule the demo person confirms after the start (confirmDemoRule), through the decision form
  const offers = yield* propose({
    scope: DEMO_SCOPE, kind: "rule", statement: "Offers to new customers are valid for 14 days; every offer says so",
    source: { kind: "jamie", id: "jamie:weekly-2026-03-16", timestamp_s: 240, quote: "Offers to new customers are valid for 14 days", link: "https://jamie.example.com/m/demo" },
    said_at: "2026-03-16T08:04:00Z", speaker: "Maria", relations: [], keywords: ["Angebot", "Gültigkeit", "offer"], valid_from: "2026-03-16", supersedes: null
  }, by)
  // a small entity tree, filed by an agent (unconfirmed until a person reviews it), and one proposed link
  const org = yield* createEntity({ scope: DEMO_SCOPE, type: "organisation", name: "Acme GmbH", parent_id: null }, by)
  const sales = yield* createEntity({ scope: DEMO_SCOPE, type: "department", name: "Vertrieb Nord", parent_id: org.id, aliases: ["VN"] }, by)
  const supplier = yield* createEntity({ scope: DEMO_SCOPE, type: "organisation", name: "Müller GmbH", parent_id: sales.id }, by)
  yield* proposeLink({
    scope: DEMO_SCOPE, from_ref: invoiceRule.ref.replace(/@\d+$/, ""), to_ref: `entity/${supplier.id}`, type: "concerns",
    confidence: 0.9, reason: "the rule names Müller GmbH as the supplier whose invoices it is about"
  }, { grantId: person.id })
  return {
    feederToken: "token" in service ? service.token : null,
    confirmRuleId: offers.ref.replace(/^rule\//, "").replace(/@\d+$/, "")
  } satisfies DemoSeed
})

/** Keeps the feeder's bearer token in demo.env beside the dev tokens (mode 0600), with the URL the CLI's API commands read. */
export const keepFeederToken = (dataDir: string, publicUrl: string, token: string): void => {
  const envFile = join(dataDir, "demo.env")
  const kept = readFileSync(envFile, "utf8")
  if (/^GROUNDNOTE_API_TOKEN=/m.test(kept)) return
  writeFileSync(envFile, `${kept}# the demo feeder (a service bearer): with GROUNDNOTE_URL what npx groundnote search and the other API commands send\nGROUNDNOTE_URL=${publicUrl}\nGROUNDNOTE_API_TOKEN=${token}\n`, { mode: 0o600 })
  chmodSync(envFile, 0o600)
}

/**
 * The demo person confirms one proposal the way a person does: signs in on the approval login
 * form with the dev approval token, then posts the rule page's confirm form (same origin, the
 * csrf token of the session's person) to POST /v1/rules/:id/decision, the only door of decide().
 * Answers what happened, for the start output.
 */
export const confirmDemoRule = (o: {
  readonly publicUrl: string
  readonly ruleId: string
  readonly approvalToken: string
  readonly sessionSecret: string
  readonly email: string
}) =>
  Effect.tryPromise(async () => {
    const origin = new URL(o.publicUrl).origin
    const login = await fetch(`${origin}/approval/login`, {
      method: "POST", redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", origin },
      body: new URLSearchParams({ token: o.approvalToken }).toString()
    })
    const cookie = login.headers.getSetCookie().map((c) => c.split(";")[0] ?? "").find((c) => c.includes("gn_session="))
    if (login.status !== 303 || cookie === undefined) throw new Error(`sign-in answered ${login.status}`)
    const decided = await fetch(`${origin}/v1/rules/${o.ruleId}/decision`, {
      method: "POST", redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", origin, cookie },
      body: new URLSearchParams({
        decision: "confirm", version: "1", csrf: csrfToken(o.sessionSecret, o.email.toLowerCase()),
        reason: "confirmed by the demo person at the first start, so a first search finds a rule"
      }).toString()
    })
    const location = decided.headers.get("location") ?? ""
    if (decided.status !== 303 || !location.includes("done=confirm")) throw new Error(`the decision answered ${decided.status}`)
    return o.ruleId
  })
