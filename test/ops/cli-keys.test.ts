/**
 * groundnote key create|list|add-recipient|rotate (the built CLI) against the ops listener in this
 * process: the identity goes only to --out (0600, never over a file, only its path printed), the
 * recipient to key_recipient; rotate retires the created recipients; --instance is the instance's.
 */
import { spawn } from "node:child_process"
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Decrypter, Encrypter } from "age-encryption"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { OpsStore } from "../../src/db/ops-store.js"
import { tempDir, testConfig } from "../support/env.js"
import { captureLogs } from "../support/logs.js"
import { OPS_TOKEN, type Started, startListener } from "./support.js"

const root = join(import.meta.dirname, "..", "..")
const cliPath = join(root, "dist", "src", "ops", "cli.js")

const cleanEnv = (): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("GROUNDNOTE_") && v !== undefined) env[k] = v
  return env
}

interface Result { readonly code: number | null; readonly stdout: string; readonly stderr: string }

const cli = (args: ReadonlyArray<string>, env: Record<string, string>): Promise<Result> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliPath, ...args], { env, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d: Buffer) => { stdout += d.toString() })
    child.stderr.on("data", (d: Buffer) => { stderr += d.toString() })
    const timer = setTimeout(() => child.kill("SIGKILL"), 20_000)
    child.on("error", reject)
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })

const identityIn = (file: string): string => readFileSync(file, "utf8").split("\n").find((l) => l.startsWith("AGE-SECRET-KEY-1")) ?? ""

describe("groundnote key", { timeout: 90_000 }, () => {
  const { dir, cleanup } = tempDir("gn-key-")
  const keys = tempDir("gn-key-out-")
  const logs = captureLogs()
  let listener: Started
  const env = (): Record<string, string> => ({ ...cleanEnv(), GROUNDNOTE_DATA_DIR: dir, GROUNDNOTE_OPS_TOKEN: OPS_TOKEN })
  const recipients = () => listener.run(Effect.flatMap(OpsStore, (o) => o.listRecipients()))

  beforeAll(async () => {
    listener = await startListener(testConfig(dir), logs.layer)
  })
  afterAll(async () => {
    await listener.stop()
    cleanup()
    keys.cleanup()
  })

  it("key create writes the identity to --out (0600), prints only its path, stores only the recipient", async () => {
    const out = join(keys.dir, "sales.age-identity")
    const r = await cli(["key", "create", "--scope", "sales", "--out", out], env())
    expect(r.code).toBe(0)
    expect(r.stdout).toBe(`${out}\n`)
    expect(statSync(out).mode & 0o777).toBe(0o600)
    const identity = identityIn(out)
    expect(identity).toMatch(/^AGE-SECRET-KEY-1/)
    expect(r.stderr).not.toContain(identity)
    const rows = await recipients()
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({ scope: "sales", origin: "created", retired_at: null })
    // the stored recipient is the identity's: what is encrypted to it, the file decrypts
    const sealed = await (() => { const e = new Encrypter(); e.addRecipient(rows[0]?.recipient ?? ""); return e.encrypt("hello") })()
    const d = new Decrypter()
    d.addIdentity(identity)
    expect(await d.decrypt(sealed, "text")).toBe("hello")
    expect(JSON.stringify(await recipients())).not.toContain(identity)
  })

  it("key create refuses an existing --out: nothing written, nothing stored", async () => {
    const out = join(keys.dir, "existing")
    writeFileSync(out, "keep me\n")
    const r = await cli(["key", "create", "--json", "--scope", "ops", "--out", out], env())
    expect(r.code).toBe(1)
    expect(JSON.parse(r.stdout)).toMatchObject({ error: "file-exists" })
    expect(readFileSync(out, "utf8")).toBe("keep me\n")
    expect((await recipients()).filter((k) => k.scope === "ops")).toEqual([])
  })

  it("a scope that is not configured is refused by the service and the new identity file removed", async () => {
    const out = join(keys.dir, "nowhere.age-identity")
    const r = await cli(["key", "create", "--json", "--scope", "nowhere", "--out", out], env())
    expect(r.code).toBe(1)
    expect(JSON.parse(r.stdout)).toMatchObject({ error: "validation-failed" })
    expect(existsSync(out)).toBe(false)
  })

  it("--scope and --instance exclude each other (usage, exit 2); --instance keys ops.sqlite", async () => {
    expect((await cli(["key", "create", "--scope", "sales", "--instance", "--out", join(keys.dir, "x")], env())).code).toBe(2)
    expect((await cli(["key", "create", "--out", join(keys.dir, "x")], env())).code).toBe(2)
    expect(existsSync(join(keys.dir, "x"))).toBe(false)
    const out = join(keys.dir, "instance.age-identity")
    const r = await cli(["key", "create", "--json", "--instance", "--out", out], env())
    expect(r.code).toBe(0)
    expect(JSON.parse(r.stdout)).toMatchObject({ file: out, key: { scope: null, origin: "created" } })
  })

  it("add-recipient adds someone's public key; a malformed one is validation-failed", async () => {
    const other = await (await import("../../src/keys/keypair.js")).makeKeyPair.pipe(Effect.runPromise)
    const ok = await cli(["key", "add-recipient", "--json", "--scope", "sales", "--recipient", other.recipient, "--label", "DPO"], env())
    expect(ok.code).toBe(0)
    expect(JSON.parse(ok.stdout)).toMatchObject({ scope: "sales", recipient: other.recipient, origin: "added", label: "DPO" })
    const bad = await cli(["key", "add-recipient", "--json", "--scope", "sales", "--recipient", "age1notakey"], env())
    expect(bad.code).toBe(1)
    expect(JSON.parse(bad.stdout)).toMatchObject({ error: "validation-failed" })
    const list = await cli(["key", "list"], env())
    expect(list.code).toBe(0)
    expect(list.stderr).toContain(other.recipient)
  })

  it("rotate: a new pair, the created recipient retired, the added one kept", async () => {
    const before = (await recipients()).filter((k) => k.scope === "sales")
    const created = before.find((k) => k.origin === "created")
    const out = join(keys.dir, "sales-2.age-identity")
    const r = await cli(["key", "rotate", "--json", "--scope", "sales", "--out", out], env())
    expect(r.code).toBe(0)
    const answer = JSON.parse(r.stdout) as { added: { recipient: string }; retired: Array<{ recipient: string }> }
    expect(answer.retired.map((k) => k.recipient)).toEqual([created?.recipient])
    const active = (await recipients()).filter((k) => k.scope === "sales" && k.retired_at === null)
    expect(active.map((k) => k.origin).sort()).toEqual(["added", "created"])
    expect(active.map((k) => k.recipient)).toContain(answer.added.recipient)
    expect(active.map((k) => k.recipient)).not.toContain(created?.recipient)
    expect(identityIn(out)).not.toBe(identityIn(join(keys.dir, "sales.age-identity")))
  })
})
