/**
 * Litestream (backup kind `litestream`, architecture.md §3): Groundnote never supervises it, it
 * only asks it for the newest state of a file: `litestream restore -o <tmp> <live path>`, which
 * finds the replica in Litestream's own config (LITESTREAM_CONFIG or /etc/litestream.yml, read
 * by Litestream itself; backup.target and backup.prefix are not read here).
 *
 * The binary: `litestream` on PATH, else the one this installation brings
 * (node_modules/@flydotio/litestream-<platform>-<arch>/litestream, an optional dependency; only
 * linux-x64 is published where we install from). Where a PATH candidate is the node script of
 * the wrapper package @flydotio/litestream (it neither passes the exit code on nor forwards
 * signals), the real binary beside it is used instead.
 */
import { execFile } from "node:child_process"
import { accessSync, closeSync, constants, existsSync, openSync, readSync, realpathSync, statSync } from "node:fs"
import { delimiter, dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"

const isExecutable = (path: string): boolean => {
  try {
    if (!statSync(path).isFile()) return false
    accessSync(path, constants.X_OK)
    return true
  } catch {
    return false
  }
}

/** True when `path` is a script run by node (its first line is a node shebang). */
const isNodeScript = (path: string): boolean => {
  try {
    const fd = openSync(path, "r")
    try {
      const buf = Buffer.alloc(64)
      const n = readSync(fd, buf, 0, 64, 0)
      return /^#!.*\bnode\b/.test(buf.subarray(0, n).toString("latin1").split("\n")[0] ?? "")
    } finally {
      closeSync(fd)
    }
  } catch {
    return false
  }
}

/** The real binary behind the npm package's node script, or `path` itself. */
const realBinary = (path: string): string | null => {
  if (!isNodeScript(path)) return path
  try {
    const script = realpathSync(path) // …/node_modules/@flydotio/litestream/index.js
    const binary = join(dirname(dirname(script)), `litestream-${process.platform}-${process.arch}`, "litestream")
    return isExecutable(binary) ? binary : null
  } catch {
    return null
  }
}

/** The platform package's binary in this module's installation (src/backup or dist/src/backup), else null. */
const bundledBinary = (): string | null => {
  let dir = dirname(fileURLToPath(import.meta.url))
  for (let i = 0; i < 6; i++) {
    const candidate = join(dir, "node_modules", "@flydotio", `litestream-${process.platform}-${process.arch}`, "litestream")
    if (isExecutable(candidate)) return candidate
    if (existsSync(join(dir, "package.json"))) break
    const up = dirname(dir)
    if (up === dir) break
    dir = up
  }
  return null
}

/** The litestream binary: PATH first, then this installation's platform package; null when there is none. */
export const findLitestream = (env: Readonly<Record<string, string | undefined>> = process.env): string | null => {
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (dir === "") continue
    const candidate = join(dir, "litestream")
    if (isExecutable(candidate)) {
      const real = realBinary(candidate)
      if (real !== null) return real
    }
  }
  return bundledBinary()
}

export interface ExecResult {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs a program without a shell; never fails (the exit code tells). */
export const execProgram = (
  file: string,
  args: ReadonlyArray<string>,
  options: { readonly env?: Readonly<Record<string, string | undefined>>; readonly timeoutMs?: number } = {}
): Effect.Effect<ExecResult> =>
  Effect.async<ExecResult>((resume) => {
    const child = execFile(file, [...args], {
      env: { ...(options.env ?? process.env) },
      timeout: options.timeoutMs ?? 0,
      maxBuffer: 4 * 1024 * 1024,
      windowsHide: true
    }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === "number" ? error.code : null
      resume(Effect.succeed({ code, stdout: String(stdout), stderr: error !== null && code === null ? `${String(stderr)}${error.message}` : String(stderr) }))
    })
    return Effect.sync(() => {
      child.kill("SIGKILL")
    })
  })

/** `litestream version`, e.g. "v0.3.13"; null when the binary does not run. */
export const litestreamVersion = (binary: string): Effect.Effect<string | null> =>
  Effect.map(execProgram(binary, ["version"], { timeoutMs: 10_000 }), (r) =>
    r.code === 0 ? (r.stdout.trim().split("\n")[0] ?? "").trim() || null : null)

/** The last meaningful line of Litestream's output, without its time= prefix, for a check's detail. */
export const lastLine = (text: string): string => {
  const lines = text.split("\n").map((l) => l.trim()).filter((l) => l.length > 0)
  const last = lines[lines.length - 1] ?? ""
  return last.replace(/^time=\S+\s+/, "").slice(0, 300)
}
