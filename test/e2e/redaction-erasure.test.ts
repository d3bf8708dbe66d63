/**
 * Erasure of a person, black box (architecture.md §15.2, gaps.md §12): `groundnote serve` runs as
 * a real process over a keyed scope (and a keyed instance), and a real Litestream replicates the
 * data dir with the config `groundnote backup litestream-config` prints. The data dir is backed
 * up both ways an operator can choose: the service runs with `backup.kind` copy (encrypted copies,
 * the nightly export) and, for the replica's reseed after the redaction, is restarted once with
 * the same data dir under `backup.kind` litestream.
 * A mail from Petra Müller with her address and phone number, a rule quoting her, an entity named
 * after her, a link, a search for her name, a nightly export, an encrypted backup copy and an
 * encrypted Litestream replica are seeded through the public API and the CLI. A person with the
 * `redact` right erases her name, her address and her number on the approval channel (preview,
 * then confirm with a reason). After the next backup run and nightly export, no byte of the data
 * dir, the export directory, the backup directory or the replica holds any of the three — raw,
 * lowercased, as an FTS token, and inside every age-encrypted copy once decrypted with the
 * scope's identity; searches for her find nothing; the rule stays confirmed with its history and
 * is marked `redacted: true`.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { join, relative } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { gunzipSync } from "node:zlib"
import { Decrypter } from "age-encryption"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { csrfToken } from "../../src/auth/csrf.js"
import { findLitestream } from "../../src/backup/litestream.js"
import { tempDir } from "../support/env.js"
import { CLI, cleanEnv, cli, freePort, json, type Result } from "./support.js"

const S = (c: string) => c.repeat(40)
const EMAIL = "dev@example.com"
const SCOPE = "sales"

/** The three terms an erasure request names. */
const NAME = "Petra Müller"
const ADDRESS = "petra.mueller@example.com"
const PHONE = "+49 151 73928461"
/**
 * In the order they are redacted: a term matches inside longer text after folding (punctuation
 * folds to a space), so the name first would already take "petra.mueller" out of the address.
 */
const TERMS = [ADDRESS, PHONE, NAME] as const

/**
 * Every form the terms can take in a file: as sent, lowercased, the FTS tokens of unicode61 with
 * remove_diacritics ("muller"), the umlaut folding of the quote check ("mueller"), the parts of
 * the address, and the number's digits as one run and its long token (short tokens like "49" or
 * "151" occur everywhere in binary files and prove nothing). Each is searched case-insensitively
 * (ASCII), NFC and NFD, in UTF-8 and UTF-16LE.
 */
const FORMS: ReadonlyArray<string> = [
  NAME, "petra müller", "müller", "muller", "mueller", "petra",
  ADDRESS, "petra.mueller",
  PHONE, "+4915173928461", "4915173928461", "015173928461", "73928461"
]

/** The trigrams of her name and number that no other seeded text contains (entity_fts, lex_tri use the trigram tokenizer). */
const TRIGRAMS = ["pet", "etr", "mül", "üll", "mul", "ull", "mue", "uel", "739", "392", "928", "846"]

const asciiLower = (b: Buffer): Buffer => {
  const out = Buffer.from(b)
  for (let i = 0; i < out.length; i++) {
    const c = out[i] ?? 0
    if (c >= 0x41 && c <= 0x5a) out[i] = c + 0x20
  }
  return out
}

const NEEDLES: ReadonlyArray<readonly [string, Buffer]> = FORMS.flatMap((form) => {
  const variants = new Set([form, form.toLowerCase(), form.toUpperCase()].flatMap((v) => [v.normalize("NFC"), v.normalize("NFD")]))
  return [...variants].flatMap((v) => [
    [`${form} (utf-8)`, asciiLower(Buffer.from(v, "utf8"))] as const,
    [`${form} (utf-16le)`, asciiLower(Buffer.from(v, "utf16le"))] as const
  ])
})

/** The forms found in `bytes` (deduplicated), [] when none. */
const formsIn = (bytes: Buffer | Uint8Array): Array<string> => {
  const hay = asciiLower(Buffer.from(bytes))
  return [...new Set(NEEDLES.filter(([, n]) => hay.includes(n)).map(([name]) => name))]
}

/** Every regular file under `dir` (recursively; a socket or a missing dir yields nothing). */
const filesUnder = (dir: string): Array<string> => {
  if (!existsSync(dir)) return []
  const out: Array<string> = []
  for (const name of readdirSync(dir)) {
    const p = join(dir, name)
    const st = statSync(p)
    if (st.isDirectory()) out.push(...filesUnder(p))
    else if (st.isFile()) out.push(p)
  }
  return out
}

const AGE_HEADER = "age-encryption.org/v1"
const isAge = (bytes: Buffer): boolean => bytes.subarray(0, AGE_HEADER.length).toString("latin1") === AGE_HEADER

interface VocabDb {
  prepare(sql: string): { all(...params: ReadonlyArray<unknown>): Array<Record<string, unknown>> }
  exec(sql: string): void
  close(): void
}
const Database = createRequire(import.meta.url)("better-sqlite3") as new (file: string, options?: { readonly?: boolean; fileMustExist?: boolean }) => VocabDb

const WORD_FTS = ["rule_fts", "rejected_fts", "lex_word", "lex_stem"] as const
const TRIGRAM_FTS = ["entity_fts", "lex_tri"] as const
const WORD_PREFIXES = ["petra", "mull", "muell", "müll", "7392846", "4915173928461"]

/**
 * The tokens of every FTS5 table of a scope file that belong to her, read through fts5vocab
 * tables in the connection's temp schema (raw bytes alone can miss a token: FTS5 stores terms
 * prefix-compressed). Opened read-only; the live file is never written.
 */
const herTokens = (file: string): Array<string> => {
  const db = new Database(file, { readonly: true, fileMustExist: true })
  try {
    const found: Array<string> = []
    for (const t of [...WORD_FTS, ...TRIGRAM_FTS]) {
      db.exec(`CREATE VIRTUAL TABLE temp.v_${t} USING fts5vocab(main, ${t}, row)`)
      const terms = db.prepare(`SELECT term FROM temp.v_${t}`).all().map((r) => String(r.term))
      const hit = (WORD_FTS as ReadonlyArray<string>).includes(t)
        ? terms.filter((term) => WORD_PREFIXES.some((p) => term.startsWith(p)))
        : terms.filter((term) => TRIGRAMS.includes(term))
      found.push(...hit.map((term) => `${t}: ${term}`))
    }
    return found
  } finally {
    db.close()
  }
}

/**
 * Where in a SQLite file she still is, by table and column (every text value, folded as the
 * grep folds): says which part left her there, beside the raw bytes that prove it.
 */
const herRows = (file: string): Array<string> => {
  const db = new Database(file, { readonly: true, fileMustExist: true })
  try {
    const found = new Set<string>()
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL TABLE%'").all()
    for (const { name } of tables) {
      const columns = db.prepare(`SELECT name FROM pragma_table_info('${String(name)}')`).all().map((c) => String(c.name))
      for (const row of db.prepare(`SELECT * FROM "${String(name)}"`).all()) {
        for (const c of columns) {
          const v = row[c]
          if (typeof v !== "string" && !Buffer.isBuffer(v)) continue
          for (const form of formsIn(Buffer.isBuffer(v) ? v : Buffer.from(v))) found.add(`${String(name)}.${c}: ${form}`)
        }
      }
    }
    return [...found]
  } finally {
    db.close()
  }
}

/** The mail of the erasure request: her name, address and number in the sender, the auth headers, the text and an attachment. */
const MAIL = {
  scope: SCOPE,
  source: {
    kind: "mail", id: "mail:<invoice-release-2026-03@example.com>", title: "Freigabe großer Rechnungen",
    occurred_at: "2026-03-12T09:15:00Z", sender: `${NAME} <${ADDRESS}>`, thread: null, link: null,
    auth: { from: `${NAME} <${ADDRESS}>`, authentication_results: `mx.example.com; spf=pass smtp.mailfrom=${ADDRESS}; dkim=pass header.d=example.com` }
  },
  text: [
    "Hallo zusammen,",
    "",
    `ab sofort gilt: Rechnungen über 5.000 Euro gebe ich nur nach Rückruf unter ${PHONE} frei.`,
    `Bei Fragen schreibt mir an ${ADDRESS}.`,
    "",
    "Viele Grüße",
    NAME
  ].join("\r\n"),
  attachments: [
    { filename: `Vollmacht ${NAME}.pdf`, media_type: "application/pdf", size: 2048, external: null, text: `Vollmacht für ${NAME}, Telefon ${PHONE}`, text_origin: "ocr" }
  ]
}

const QUOTE = `Rechnungen über 5.000 Euro gebe ich nur nach Rückruf unter ${PHONE} frei`

const PROPOSAL = {
  scope: SCOPE, kind: "rule",
  statement: `Invoices above 5,000 euros are released only after a call-back to ${NAME}`,
  source: { kind: "mail", id: MAIL.source.id, quote: QUOTE, link: null },
  said_at: "2026-03-12T09:15:00Z", speaker: NAME, relations: [], keywords: ["Rechnungsfreigabe", "Rückruf"],
  valid_from: "2026-03-12", supersedes: null
}

interface Running {
  readonly child: ChildProcess
  readonly output: () => string
}

describe("erasure of a person: nothing of her is left in any byte the service keeps or copies", { timeout: 180_000 }, () => {
  const { dir: root, cleanup } = tempDir("gn-erasure-")
  const dataDir = join(root, "data")
  const backupDir = join(root, "backup")
  const exportDir = join(root, "exports")
  const replicaDir = join(root, "replica")
  const keyDir = join(root, "keys")
  const work = join(root, "work")
  const identityFile = join(keyDir, `${SCOPE}.age-identity`)
  const instanceIdentityFile = join(keyDir, "_instance.age-identity")
  const copyConfig = join(root, "groundnote.json")
  const litestreamConfigFile = join(root, "groundnote-litestream.json")
  const scopeFile = join(dataDir, "scopes", `${SCOPE}.sqlite`)
  let url = ""
  let env: Record<string, string> = {}
  let service: Running | null = null
  let litestream: ChildProcess | null = null
  let litestreamConfig = ""
  let feeder = ""
  let cookie = ""
  let entityId = ""
  const generationsBefore: Array<string> = []

  const logs: Array<() => string> = []
  const start = async (config = copyConfig): Promise<Running> => {
    const child = spawn(process.execPath, [CLI, "serve"], { env: { ...env, GROUNDNOTE_CONFIG: config }, cwd: root, stdio: ["ignore", "pipe", "pipe"] })
    let out = ""
    child.stdout?.on("data", (d: Buffer) => { out += d.toString() })
    child.stderr?.on("data", (d: Buffer) => { out += d.toString() })
    const until = Date.now() + 30_000
    while (Date.now() < until) {
      if (child.exitCode !== null) throw new Error(`serve exited ${child.exitCode}: ${out}`)
      const up = await fetch(`${url}/healthz`).then((r) => r.ok, () => false)
      if (up && existsSync(join(dataDir, "ops.sock"))) {
        logs.push(() => out)
        return { child, output: () => out }
      }
      await new Promise((r) => setTimeout(r, 100))
    }
    child.kill("SIGKILL")
    throw new Error(`serve did not come up: ${out}`)
  }
  const stopChild = (child: ChildProcess | null) => new Promise<void>((resolve) => {
    if (child === null || child.exitCode !== null || child.signalCode !== null) return resolve()
    child.once("exit", () => resolve())
    child.kill("SIGTERM")
  })

  const ok = (r: Result, what: string): Result => {
    expect(r.code, `${what}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`).toBe(0)
    return r
  }

  /** A call of the public API as the feeder (bearer, channel api). */
  const api = async (method: string, path: string, body?: unknown) => {
    const headers: Record<string, string> = { authorization: `Bearer ${feeder}` }
    if (body !== undefined) headers["content-type"] = "application/json"
    const res = await fetch(`${url}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })
    const text = await res.text()
    return { status: res.status, text, json: (text.startsWith("{") ? JSON.parse(text) : {}) as Record<string, unknown> }
  }

  /** A call on the approval channel as the signed-in person (session cookie, Origin of public_url, CSRF header). */
  const approval = async (method: string, path: string, body?: unknown) => {
    const headers: Record<string, string> = { cookie, origin: url, csrf: csrfToken(S("s"), EMAIL) }
    if (body !== undefined) headers["content-type"] = "application/json"
    const res = await fetch(`${url}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })
    const bytes = Buffer.from(await res.arrayBuffer())
    const text = bytes.toString("utf8")
    return { status: res.status, bytes, text, json: (text.startsWith("{") ? JSON.parse(text) : {}) as Record<string, unknown> }
  }

  const identity = (file = identityFile): string => {
    const line = readFileSync(file, "utf8").split("\n").find((l) => l.startsWith("AGE-SECRET-KEY-"))
    if (line === undefined) throw new Error(`no AGE-SECRET-KEY line in ${file}`)
    return line.trim()
  }

  /** The plaintext of an age file, decrypted with the scope's and the instance's identity. */
  const decrypt = async (bytes: Buffer): Promise<Buffer> => {
    const d = new Decrypter()
    d.addIdentity(identity())
    d.addIdentity(identity(instanceIdentityFile))
    return Buffer.from(await d.decrypt(new Uint8Array(bytes)))
  }

  /** The litestream binary of this installation (@flydotio/litestream-linux-x64). */
  const litestreamBinary = (): string => {
    const b = findLitestream()
    if (b === null) throw new Error("no litestream binary (node_modules/@flydotio/litestream-linux-x64, an optional dependency)")
    return b
  }

  const run = (file: string, args: ReadonlyArray<string>, runEnv: Record<string, string>) =>
    new Promise<Result>((resolve, reject) => {
      const child = spawn(file, args, { env: runEnv, stdio: ["ignore", "pipe", "pipe"] })
      let stdout = ""
      let stderr = ""
      child.stdout.on("data", (d: Buffer) => { stdout += d.toString() })
      child.stderr.on("data", (d: Buffer) => { stderr += d.toString() })
      child.on("error", reject)
      child.on("close", (code) => resolve({ code, stdout, stderr }))
    })

  const litestreamYml = join(work, "litestream.yml")
  /** `litestream replicate` with the printed config (written to litestreamYml). */
  const startLitestream = (): ChildProcess => spawn(litestreamBinary(), ["replicate", "-config", litestreamYml], { env: cleanEnv(), stdio: "ignore" })

  /** A YAML scalar of the printed config: plain, or double-quoted (JSON's escaping). */
  const scalar = (v: string): string => (v.trim().startsWith("\"") ? JSON.parse(v.trim()) as string : v.trim())

  /** The replica URL of `dbPath` in the printed litestream.yml. */
  const replicaOf = (dbPath: string): string => {
    const lines = litestreamConfig.split("\n")
    const at = lines.findIndex((l) => /^\s*-?\s*path:\s/.test(l) && scalar(l.replace(/^\s*-?\s*path:\s*/, "")) === dbPath)
    const urlLine = lines.slice(at + 1).find((l) => /^\s*-?\s*url:\s/.test(l))
    if (at < 0 || urlLine === undefined) throw new Error(`no replica of ${dbPath} in:\n${litestreamConfig}`)
    return scalar(urlLine.replace(/^\s*-?\s*url:\s*/, ""))
  }

  /**
   * `litestream restore` of the scope's replica (generation `generation`, else the newest) with the
   * identity in a config of its own, into `out`: Litestream itself decrypts, Groundnote's restore
   * (which replays the redaction ledger) is not involved, so this is what the replica holds.
   */
  const restoreReplica = async (out: string, generation?: string): Promise<Result> => {
    const config = join(work, `restore-${Date.now()}-${Math.random().toString(16).slice(2)}.yml`)
    writeFileSync(config, [
      "dbs:",
      `  - path: ${JSON.stringify(scopeFile)}`,
      "    replicas:",
      `      - url: ${JSON.stringify(replicaOf(scopeFile))}`,
      "        age:",
      "          identities:",
      `            - ${JSON.stringify(identity())}`
    ].join("\n") + "\n", { mode: 0o600 })
    const args = ["restore", "-config", config, "-o", out, ...(generation === undefined ? [] : ["-generation", generation]), scopeFile]
    return run(litestreamBinary(), args, cleanEnv())
  }

  /** The generations of the scope's replica (directory names under generations/). */
  const generations = (): Array<string> => {
    const dir = join(fileURLToPath(replicaOf(scopeFile)), "generations")
    return existsSync(dir) ? readdirSync(dir).sort() : []
  }

  /** Waits until the newest state Litestream restores from the replica satisfies `ready`. */
  const waitReplica = async (what: string, ready: (file: string) => boolean) => {
    let last = ""
    for (let attempt = 0; attempt < 150; attempt++) {
      const out = join(work, `wait-${attempt}-${Date.now()}.sqlite`)
      const r = await restoreReplica(out)
      last = r.stderr
      if (r.code === 0 && existsSync(out) && ready(out)) return
      await new Promise((res) => setTimeout(res, 100))
    }
    throw new Error(`the replica never held ${what}: ${last}`)
  }

  const countRows = (file: string, sql: string): number => {
    const db = new Database(file, { readonly: true, fileMustExist: true })
    try {
      return Number(db.prepare(sql).all()[0]?.n ?? 0)
    } finally {
      db.close()
    }
  }

  beforeAll(async () => {
    for (const d of [dataDir, backupDir, exportDir, replicaDir, keyDir, work]) mkdirSync(d, { mode: 0o700 })
    chmodSync(root, 0o700)
    const port = await freePort()
    url = `http://127.0.0.1:${port}`
    const config = (backup: Record<string, unknown>) => JSON.stringify({
      instance: "acme", zone: "Europe/Berlin", public_url: url, scopes: [{ name: SCOPE, providers_allowed: [] }], search: {}, backup
    })
    writeFileSync(copyConfig, config({ kind: "copy", directory: backupDir, export_directory: exportDir, deadman_url: null }))
    writeFileSync(litestreamConfigFile, config({ kind: "litestream", target: pathToFileURL(replicaDir).href, prefix: "acme", export_directory: exportDir, deadman_url: null }))
    env = {
      ...cleanEnv(),
      GROUNDNOTE_AUTH_MODE: "dev-token", GROUNDNOTE_SESSION_SECRET: S("s"), GROUNDNOTE_OPS_TOKEN: S("o"),
      GROUNDNOTE_DEV_MCP_TOKEN: S("m"), GROUNDNOTE_DEV_APPROVAL_TOKEN: S("a"), GROUNDNOTE_DEV_EMAIL: EMAIL,
      GROUNDNOTE_DATA_DIR: dataDir, GROUNDNOTE_CONFIG: copyConfig, GROUNDNOTE_PORT: String(port),
      GROUNDNOTE_KEY_DIR: keyDir
    }
  }, 10_000)

  afterAll(async () => {
    await stopChild(litestream)
    await stopChild(service?.child ?? null)
    cleanup()
  }, 90_000)

  it("seeds her mail, a rule quoting her, an entity and a link, a search, an encrypted backup copy, a nightly export and a Litestream replica", async () => {
    service = await start()
    ok(await cli(["scope", "create", SCOPE], env), "scope create")
    ok(await cli(["grants", "create", "--kind", "person", "--auth", "email", "--identity", EMAIL, "--scope", SCOPE,
      "--right", "read", "--right", "propose", "--right", "decide", "--right", "redact"], env), "grants create person with redact")
    feeder = ok(await cli(["grants", "create", "--kind", "service", "--auth", "bearer", "--scope", SCOPE,
      "--right", "read", "--right", "propose", "--label", "feeder"], env), "grants create feeder").stdout.trim()
    // the scope's key: the identity goes to the key dir (off the host in production), the recipient into ops.sqlite
    ok(await cli(["key", "create", "--scope", SCOPE, "--out", identityFile], env), "key create --scope")
    ok(await cli(["key", "create", "--instance", "--out", instanceIdentityFile], env), "key create --instance")
    for (const f of [identityFile, instanceIdentityFile]) {
      expect(statSync(f).mode & 0o777).toBe(0o600)
      expect(identity(f)).toMatch(/^AGE-SECRET-KEY-1[0-9A-Z]+$/)
    }

    const login = await fetch(`${url}/approval/login`, {
      method: "POST", redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" },
      body: new URLSearchParams({ token: S("a") }).toString()
    })
    expect(login.status).toBe(303)
    cookie = (login.headers.get("set-cookie") ?? "").split(";")[0] ?? ""

    const source = await api("POST", "/v1/sources", MAIL)
    expect(source.status, source.text).toBe(201)
    const proposal = await api("POST", "/v1/proposals", PROPOSAL)
    expect(proposal.status, proposal.text).toBe(201)
    expect(proposal.json.ref).toBe(`rule/${SCOPE}-0001@1`)
    const confirmed = await approval("POST", `/v1/rules/${SCOPE}-0001/decision`, { decision: "confirm", version: 1, reason: `agreed with ${NAME} on the phone` })
    expect(confirmed.status, confirmed.text).toBe(200)
    const entity = await api("POST", "/v1/entities", {
      scope: SCOPE, type: "person", name: NAME, parent_id: null, aliases: [ADDRESS], evidence: `signs invoice releases, phone ${PHONE}`
    })
    expect(entity.status, entity.text).toBe(201)
    entityId = String(entity.json.id)
    const link = await api("POST", "/v1/links", {
      scope: SCOPE, from_ref: `rule/${SCOPE}-0001`, to_ref: `entity/${entityId}`, type: "concerns", confidence: 0.9, reason: `the rule names ${NAME}`
    })
    expect(link.status, link.text).toBe(201)
    const search = await api("POST", "/v1/search", { scopes: [SCOPE], text: NAME })
    expect(search.status, search.text).toBe(200)
    expect((search.json.bundles as Array<{ head: { ref: string } }>).map((b) => b.head.ref)).toContain(`rule/${SCOPE}-0001@2`)

    // the encrypted backup copy and the nightly export (written by the probe of the copy)
    const nightly = ok(await cli(["backup", "nightly", "--json"], env), "backup nightly before the redaction")
    expect(json(nightly)).toMatchObject({ ok: true, run: { ok: true }, probe: { ok: true } })
    // soft: when a copy is missing or plaintext, the rest of the proof still runs and says what else holds
    const copies = filesUnder(backupDir).map((f) => relative(backupDir, f))
    const copy = join(backupDir, "scopes", `${SCOPE}.sqlite.age`)
    expect.soft(copies, "the keyed scope's backup copy").toContain(join("scopes", `${SCOPE}.sqlite.age`))
    expect.soft(copies, "no plaintext copy of a keyed scope").not.toContain(join("scopes", `${SCOPE}.sqlite`))
    const archives = filesUnder(join(exportDir, SCOPE)).filter((f) => f.endsWith(".tar.gz.age"))
    expect.soft(archives.length, "one encrypted nightly export").toBe(1)
    expect.soft(filesUnder(join(exportDir, SCOPE)).filter((f) => f.endsWith(".tar.gz")), "no plaintext export of a keyed scope").toEqual([])
    // the proof below is not vacuous: her name is in the live file, in the decrypted copy and in the decrypted export now
    expect(formsIn(Buffer.concat([scopeFile, `${scopeFile}-wal`].filter((f) => existsSync(f)).map((f) => readFileSync(f))))).toContain(`${NAME} (utf-8)`)
    if (existsSync(copy)) {
      expect(isAge(readFileSync(copy))).toBe(true)
      expect(formsIn(await decrypt(readFileSync(copy)))).toContain(`${NAME} (utf-8)`)
    }
    if (archives[0] !== undefined) expect(formsIn(gunzipSync(await decrypt(readFileSync(archives[0]))))).toContain(`${NAME} (utf-8)`)
    expect(herTokens(scopeFile).length).toBeGreaterThan(0)

    // Litestream with the config Groundnote prints for this data dir: every file, recipients only
    const printed = ok(await cli(["backup", "litestream-config"], { ...env, GROUNDNOTE_CONFIG: litestreamConfigFile }), "backup litestream-config")
    litestreamConfig = printed.stdout
    expect(litestreamConfig).not.toContain("AGE-SECRET-KEY")
    expect(litestreamConfig).toContain(scopeFile)
    expect(litestreamConfig).toMatch(/recipients:\s*\n\s*- "?age1[0-9a-z]{58}/)
    writeFileSync(litestreamYml, litestreamConfig, { mode: 0o600 })
    litestream = startLitestream()
    await waitReplica("her rule", (f) => countRows(f, `SELECT count(*) AS n FROM rule_version WHERE rule_id = '${SCOPE}-0001'`) === 2)
    generationsBefore.push(...generations())
    expect(generationsBefore.length).toBeGreaterThan(0)
  }, 150_000)

  it("a person with `redact` erases her name, address and number on the approval channel: preview, then confirm with a reason", async () => {
    // a service credential is refused on the approval channel's route
    const refused = await api("POST", "/v1/redactions/preview", { scope: SCOPE, term: NAME })
    expect(refused.status, refused.text).toBeGreaterThanOrEqual(401)
    // the procedure of docs/redaction.md for backup.kind litestream: Litestream holds a read
    // transaction that keeps the redaction's checkpoint from truncating the WAL, so it is stopped
    // before the confirmation and started after it; the backup run below reseeds the replica
    await stopChild(litestream)
    litestream = null
    let n = 0
    for (const term of TERMS) {
      n++
      const preview = await approval("POST", "/v1/redactions/preview", { scope: SCOPE, term })
      expect(preview.status, preview.text).toBe(200)
      expect(preview.json).toMatchObject({ scope: SCOPE, preview: expect.any(String) as unknown })
      expect(preview.json.total as number, `places of ${term}`).toBeGreaterThan(0)
      const places = preview.json.places as Array<{ table: string; column: string; count: number }>
      expect(places.length).toBeGreaterThan(0)
      expect(preview.json.rules).toEqual(expect.arrayContaining([expect.stringContaining(`${SCOPE}-0001`)]))
      // the preview names no term in its answer beyond what the person sent
      const done = await approval("POST", "/v1/redactions", { scope: SCOPE, term, reason: `erasure request DSR-2026-0042 (${n}/3)`, preview: preview.json.preview })
      expect(done.status, done.text).toBe(201)
      expect(done.json).toMatchObject({ id: `${SCOPE}-x000${n}`, scope: SCOPE, total: preview.json.total })
      // no other reader: the checkpoint completed, so the answer carries no `checkpointed: false`
      expect(done.json, "the checkpoint completed").not.toHaveProperty("checkpointed")
    }
    // the checkpoint truncated the WAL: no frame of the old text is left beside the file
    expect(existsSync(`${scopeFile}-wal`) ? statSync(`${scopeFile}-wal`).size : 0, "the WAL after the redactions").toBe(0)
    litestream = startLitestream()
    const again = await approval("POST", "/v1/redactions/preview", { scope: SCOPE, term: NAME })
    expect(again.status, again.text).toBe(200)
    expect(again.json.total).toBe(0)
  }, 90_000)

  it("searches for her find nothing; the rule is still confirmed with its history, marked redacted; the export download holds none of her", async () => {
    for (const term of TERMS) {
      const r = await api("POST", "/v1/search", { scopes: [SCOPE], text: term })
      expect(r.status, r.text).toBe(200)
      // the answer echoes the searcher's own terms (query); what it found is in bundles
      expect(r.json.bundles, `search for ${term}`).toEqual([])
    }
    const rule = await api("GET", `/v1/rules/${SCOPE}-0001`)
    expect(rule.status, rule.text).toBe(200)
    const head = rule.json.head as Record<string, unknown>
    expect([head.ref, head.status, head.redacted], JSON.stringify(head)).toEqual([`rule/${SCOPE}-0001@2`, "confirmed", true])
    expect(JSON.stringify(rule.json)).toContain("[redacted]")
    expect(formsIn(Buffer.from(rule.text))).toEqual([])
    const versions = await api("GET", `/v1/rules/${SCOPE}-0001/versions`)
    expect(versions.status, versions.text).toBe(200)
    const vs = versions.json.versions as Array<Record<string, unknown>>
    expect(vs.map((v) => [v.version, v.status])).toEqual([[1, "proposed"], [2, "confirmed"]])
    for (const v of vs) expect(v, `version ${String(v.version)}`).toMatchObject({ redacted: true })
    const decisions = versions.json.decisions as Array<Record<string, unknown>>
    expect(decisions.map((d) => d.kind)).toEqual(["confirm"])
    expect(decisions[0]).toMatchObject({ redacted: true })
    expect(formsIn(Buffer.from(versions.text))).toEqual([])
    const entity = await api("GET", `/v1/entities/${entityId}?scope=${SCOPE}`)
    expect(entity.status, entity.text).toBe(200)
    expect(entity.json).toMatchObject({ id: entityId, redacted: true })
    expect(formsIn(Buffer.from(entity.text))).toEqual([])
    const source = await api("GET", `/v1/sources/${encodeURIComponent(MAIL.source.id)}?scope=${SCOPE}&include=text,attachments`)
    expect(source.status, source.text).toBe(200)
    expect(formsIn(Buffer.from(source.text))).toEqual([])
    expect(source.json).toMatchObject({ id: MAIL.source.id, redacted: true })
    const download = await approval("GET", `/v1/export/${SCOPE}`)
    expect(download.status).toBe(200)
    expect(formsIn(gunzipSync(download.bytes))).toEqual([])
  }, 90_000)

  it("the next backup run and nightly export write fresh copies; the copies and generations taken before are gone", async () => {
    const nightly = ok(await cli(["backup", "nightly", "--json"], env), "backup nightly after the redaction")
    expect(json(nightly)).toMatchObject({ ok: true, run: { ok: true }, probe: { ok: true } })
    const archives = filesUnder(join(exportDir, SCOPE)).filter((f) => f.endsWith(".tar.gz.age"))
    expect.soft(archives.length, "one nightly archive, the rewritten one").toBe(1)
    // the same data dir under backup.kind litestream: its backup run reseeds the replica — a new
    // generation, verified, then the generations from before the redaction deleted
    await stopChild(service?.child ?? null)
    service = await start(litestreamConfigFile)
    const lenv = { ...env, GROUNDNOTE_CONFIG: litestreamConfigFile }
    const reseed = await cli(["backup", "run", "--json"], lenv)
    expect(reseed.code, reseed.stdout + reseed.stderr).toBe(0)
    expect(json(reseed)).toMatchObject({ ok: true, kind: "litestream", scopes: [{ scope: SCOPE, ok: true }] })
    await waitReplica("the redacted file", (f) => countRows(f, "SELECT count(*) AS n FROM redaction") === 3)
    const now = generations()
    expect.soft(now.filter((g) => generationsBefore.includes(g)), "generations from before the redaction").toEqual([])
    expect(now.length).toBeGreaterThan(0)
    // Litestream's local shadow WAL beside the file: it removes the generations before its current one itself
    const meta = join(dataDir, "scopes", `.${SCOPE}.sqlite-litestream`)
    const current = readFileSync(join(meta, "generation"), "utf8").trim()
    expect(readdirSync(join(meta, "generations")), "local generations beside the file").toEqual([current])
  }, 45_000)

  it("no byte under the data dir, the exports, the backups or the replica holds her name, address or number — raw, decrypted, or as an FTS token", async () => {
    const hits: Array<string> = []
    const scan = (label: string, bytes: Buffer | Uint8Array) => {
      for (const form of formsIn(bytes)) hits.push(`${label}: ${form}`)
    }
    const roots = { "data dir": dataDir, exports: exportDir, backups: backupDir, replica: replicaDir }
    let files = 0
    for (const [name, dir] of Object.entries(roots)) {
      for (const file of filesUnder(dir)) {
        files++
        const bytes = readFileSync(file)
        scan(`${name}/${relative(dir, file)}`, bytes)
        // every copy of a keyed scope and of the keyed instance is age ciphertext; decrypted, it holds none of her either
        if (name === "data dir" || file.endsWith(".sha256")) continue
        const where = `${name}/${relative(dir, file)}`
        if (!isAge(bytes)) {
          hits.push(`${where}: a plaintext copy`)
          continue
        }
        if (name === "replica") continue // Litestream's LZ4 frames: read below through litestream restore
        const plain = await decrypt(bytes)
        scan(`${where} (decrypted)`, plain)
        if (file.endsWith(".tar.gz.age")) scan(`${where} (decrypted, unpacked)`, gunzipSync(plain))
        if (file.endsWith(`${SCOPE}.sqlite.age`)) {
          const copy = join(work, `copy-${files}.sqlite`)
          writeFileSync(copy, plain)
          for (const t of herTokens(copy)) hits.push(`${where} (decrypted) token ${t}`)
          for (const r of herRows(copy)) hits.push(`${where} (decrypted) row ${r}`)
        }
      }
    }
    expect(files).toBeGreaterThan(5)
    for (const t of herTokens(scopeFile)) hits.push(`data dir token ${t}`)
    for (const r of herRows(scopeFile)) hits.push(`data dir row ${r}`)
    // what the replica holds, as Litestream restores it with the identity: every generation there is
    for (const g of generations()) {
      const out = join(work, `replica-${g}.sqlite`)
      const r = await restoreReplica(out, g)
      expect(r.code, r.stderr).toBe(0)
      scan(`replica generation ${g} (restored)`, readFileSync(out))
      for (const t of herTokens(out)) hits.push(`replica generation ${g} token ${t}`)
      for (const r of herRows(out)) hits.push(`replica generation ${g} row ${r}`)
    }
    // the service's own log lines never held her either
    for (const out of logs) scan("service log", Buffer.from(out()))
    expect(hits, `where she still is:\n${hits.join("\n")}`).toEqual([])
  }, 60_000)
})
