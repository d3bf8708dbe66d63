import { spawn } from "node:child_process"
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync, lstatSync } from "node:fs"
import { createServer, type Server } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { Effect, Either } from "effect"
import {
  checkDataDirPermissions,
  checkOpsSocketPath,
  prepareOpsSocket,
  socketPathBytes,
  sunPathLimit
} from "../../src/config/data-dir.js"
import type { StartRefusal } from "../../src/config/refusal.js"

const refusalOf = async <A>(effect: Effect.Effect<A, StartRefusal>): Promise<StartRefusal> => {
  const result = await Effect.runPromise(Effect.either(effect))
  if (Either.isRight(result)) throw new Error("expected a start refusal")
  return result.left
}

let root = ""
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "gn-dd-"))
})
afterEach(() => {
  rmSync(root, { recursive: true, force: true })
})

/** A data dir laid out as the service leaves it: 700 directories, 600 SQLite files. */
const makeDataDir = (): string => {
  const dir = join(root, "data")
  mkdirSync(join(dir, "scopes"), { recursive: true })
  chmodSync(dir, 0o700)
  chmodSync(join(dir, "scopes"), 0o700)
  for (const f of ["ops.sqlite", "ops.sqlite-wal", "ops.sqlite-shm", "scopes/sales.sqlite", "scopes/sales.sqlite-journal"]) {
    writeFileSync(join(dir, f), "")
    chmodSync(join(dir, f), 0o600)
  }
  writeFileSync(join(dir, "README.txt"), "not a database")
  chmodSync(join(dir, "README.txt"), 0o644)
  return dir
}

describe("checkDataDirPermissions", () => {
  it("accepts a data dir that only its owner can access", async () => {
    await Effect.runPromise(checkDataDirPermissions(makeDataDir()))
  })

  it("accepts a missing data dir and a data dir without scopes/", async () => {
    await Effect.runPromise(checkDataDirPermissions(join(root, "missing")))
    const dir = join(root, "fresh")
    mkdirSync(dir, { mode: 0o700 })
    chmodSync(dir, 0o700)
    await Effect.runPromise(checkDataDirPermissions(dir))
  })

  it("refuses a group- or world-accessible data dir (data-dir-permissions) with chmod 700", async () => {
    const dir = makeDataDir()
    chmodSync(dir, 0o755)
    const e = await refusalOf(checkDataDirPermissions(dir))
    expect(e.code).toBe("data-dir-permissions")
    expect(e.message).toContain(`chmod 700 ${dir}`)
    expect(e.message).toContain("0755")
  })

  it("refuses a group-accessible scopes/ (data-dir-permissions) with chmod 700", async () => {
    const dir = makeDataDir()
    chmodSync(join(dir, "scopes"), 0o750)
    const e = await refusalOf(checkDataDirPermissions(dir))
    expect(e.code).toBe("data-dir-permissions")
    expect(e.message).toContain(`chmod 700 ${join(dir, "scopes")}`)
  })

  it("refuses readable SQLite files and their companions (data-dir-permissions) with chmod 600", async () => {
    const dir = makeDataDir()
    chmodSync(join(dir, "ops.sqlite-shm"), 0o604)
    chmodSync(join(dir, "scopes", "sales.sqlite"), 0o640)
    const e = await refusalOf(checkDataDirPermissions(dir))
    expect(e.code).toBe("data-dir-permissions")
    expect(e.message).toContain(`chmod 600 ${join(dir, "ops.sqlite-shm")}`)
    expect(e.message).toContain(`chmod 600 ${join(dir, "scopes", "sales.sqlite")}`)
    expect(e.message).not.toContain("README.txt")
  })

  it("refuses a data dir path that is a file (data-dir-invalid)", async () => {
    const file = join(root, "data")
    writeFileSync(file, "")
    const e = await refusalOf(checkDataDirPermissions(file))
    expect(e.code).toBe("data-dir-invalid")
    expect(e.message).toContain(file)
  })
})

describe("checkOpsSocketPath", () => {
  it("knows sun_path: 108 bytes on Linux, 104 on macOS and the BSDs", () => {
    expect(sunPathLimit("linux")).toBe(108)
    expect(sunPathLimit("darwin")).toBe(104)
    expect(sunPathLimit("freebsd")).toBe(104)
    expect(sunPathLimit("openbsd")).toBe(104)
    expect(socketPathBytes("/a/ops.sock")).toBe(12)
    expect(socketPathBytes("/ü")).toBe(4)
  })

  it("accepts a short data dir", async () => {
    await Effect.runPromise(checkOpsSocketPath(makeDataDir()))
  })

  it("refuses a data dir whose ops.sock path is too long (ops-socket-path-too-long)", async () => {
    const dir = join(root, "x".repeat(120))
    const e = await refusalOf(checkOpsSocketPath(dir, "linux"))
    expect(e.code).toBe("ops-socket-path-too-long")
    expect(e.message).toContain(join(dir, "ops.sock"))
    expect(e.message).toContain(`needs ${socketPathBytes(join(dir, "ops.sock"))} bytes`)
    expect(e.message).toContain("limit on linux is 108")
    expect(e.message).toContain("choose a shorter GROUNDNOTE_DATA_DIR")
  })

  it("counts UTF-8 bytes and the null byte, against the platform's limit", async () => {
    // "/" + 95 + "/ops.sock" = 105 bytes + null = 106: fits Linux (108), not macOS (104).
    const ascii = `/${"a".repeat(95)}`
    await Effect.runPromise(checkOpsSocketPath(ascii, "linux"))
    expect((await refusalOf(checkOpsSocketPath(ascii, "darwin"))).code).toBe("ops-socket-path-too-long")
    // 50 characters, but 100 bytes in UTF-8.
    const umlauts = `/${"ü".repeat(50)}`
    const e = await refusalOf(checkOpsSocketPath(umlauts, "linux"))
    expect(e.code).toBe("ops-socket-path-too-long")
    expect(e.message).toContain("needs 111 bytes")
    await Effect.runPromise(checkOpsSocketPath(`/${"u".repeat(50)}`, "linux"))
  })

  it("refuses a short data dir that resolves to a long one (ops-socket-path-too-long)", async () => {
    let real = root
    for (let i = 0; i < 3; i++) real = join(real, `${String(i)}${"r".repeat(40)}`)
    mkdirSync(real, { recursive: true })
    const link = join(root, "d")
    symlinkSync(real, link)
    const e = await refusalOf(checkOpsSocketPath(link, "linux"))
    expect(e.code).toBe("ops-socket-path-too-long")
    expect(e.message).toContain("resolved")
    expect(e.message).toContain(join(real, "ops.sock"))
    expect(e.message).toContain("choose a shorter GROUNDNOTE_DATA_DIR")
  })
})

describe("prepareOpsSocket", () => {
  let server: Server | null = null
  afterEach(async () => {
    const s = server
    server = null
    if (s !== null) await new Promise<void>((resolve) => s.close(() => resolve()))
  })

  it("does nothing when ops.sock does not exist", async () => {
    await Effect.runPromise(prepareOpsSocket(makeDataDir()))
  })

  it("refuses an ops.sock that is a regular file (ops-socket-unavailable)", async () => {
    const dir = makeDataDir()
    writeFileSync(join(dir, "ops.sock"), "not a socket")
    const e = await refusalOf(prepareOpsSocket(dir))
    expect(e.code).toBe("ops-socket-unavailable")
    expect(e.message).toContain(join(dir, "ops.sock"))
    expect(e.message).toContain("not a socket")
    expect(existsSync(join(dir, "ops.sock"))).toBe(true)
  })

  it("refuses an ops.sock another process serves (ops-socket-unavailable)", async () => {
    const dir = makeDataDir()
    const path = join(dir, "ops.sock")
    const s = createServer((socket) => socket.end())
    server = s
    await new Promise<void>((resolve) => s.listen(path, () => resolve()))
    const e = await refusalOf(prepareOpsSocket(dir))
    expect(e.code).toBe("ops-socket-unavailable")
    expect(e.message).toContain(path)
    expect(e.message).toContain("GROUNDNOTE_DATA_DIR")
    expect(lstatSync(path).isSocket()).toBe(true)
  })

  it("removes a stale socket left by a crashed process", async () => {
    const dir = makeDataDir()
    const path = join(dir, "ops.sock")
    const child = spawn(process.execPath, [
      "-e",
      "require('node:net').createServer().listen(process.argv[1], () => console.log('ready'))",
      path
    ], { stdio: ["ignore", "pipe", "inherit"] })
    await new Promise<void>((resolve, reject) => {
      child.once("error", reject)
      child.stdout.on("data", (chunk: Buffer) => {
        if (chunk.toString().includes("ready")) resolve()
      })
    })
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
    child.kill("SIGKILL")
    await exited
    expect(lstatSync(path).isSocket()).toBe(true)
    await Effect.runPromise(prepareOpsSocket(dir))
    expect(existsSync(path)).toBe(false)
  })
})
