/** File helpers for the data dir: private directories (0700) and files created 0600. */
import { closeSync, existsSync, mkdirSync, openSync } from "node:fs"

export const ensurePrivateDir = (dir: string): void => {
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 })
}

/** Creates an empty file with mode 0600; fails if it exists. SQLite gives -wal/-shm the same mode. */
export const createPrivateFile = (file: string): void => {
  closeSync(openSync(file, "wx", 0o600))
}
