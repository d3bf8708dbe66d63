/** The first line of every age file (the format's version line). */
import { closeSync, openSync, readSync } from "node:fs"

export const AGE_HEADER = "age-encryption.org/v1"

/** Whether the file at `path` starts with the age header (false when it cannot be read). */
export const isAgeFile = (path: string): boolean => {
  let fd: number | null = null
  try {
    fd = openSync(path, "r")
    const buf = Buffer.alloc(AGE_HEADER.length + 1)
    const n = readSync(fd, buf, 0, buf.length, 0)
    return n === buf.length && buf.toString("latin1") === `${AGE_HEADER}\n`
  } catch {
    return false
  } finally {
    if (fd !== null) closeSync(fd)
  }
}
