/**
 * The identity file of `groundnote key create|rotate`: age-keygen's format (two comment lines,
 * then the identity), created exclusively with mode 0600 and fsynced. An existing file is never
 * overwritten: the answer is the errno (EEXIST) and nothing is written.
 */
import { closeSync, fsyncSync, openSync, writeSync } from "node:fs"

export const identityFileText = (identity: string, recipient: string, createdAt: string): string =>
  `# created: ${createdAt}\n# public key: ${recipient}\n${identity}\n`

/** Writes the file; throws the fs error (EEXIST when it exists, ENOENT without its directory). */
export const writeIdentityFile = (path: string, text: string): void => {
  const fd = openSync(path, "wx", 0o600)
  try {
    const data = Buffer.from(text, "utf8")
    let offset = 0
    while (offset < data.length) offset += writeSync(fd, data, offset, data.length - offset)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}
