/**
 * age encryption and decryption from one file to a new one, streamed in the library's 64 KiB
 * chunks (a scope file can be GBs: nothing holds the whole file in memory). The target is created
 * exclusively with mode 0600 and fsynced; on a failure the caller removes it.
 */
import { closeSync, createReadStream, createWriteStream, fsyncSync, openSync, statSync } from "node:fs"
import { Readable } from "node:stream"
import { pipeline } from "node:stream/promises"
import type { ReadableStream as WebReadableStream } from "node:stream/web"
import { Decrypter, Encrypter } from "age-encryption"

const webStream = (path: string): ReadableStream<Uint8Array> =>
  Readable.toWeb(createReadStream(path, { highWaterMark: 256 * 1024 })) as unknown as ReadableStream<Uint8Array>

const writeNew = async (stream: ReadableStream<Uint8Array>, target: string): Promise<number> => {
  const fd = openSync(target, "wx", 0o600)
  try {
    await pipeline(Readable.fromWeb(stream as unknown as WebReadableStream<Uint8Array>), createWriteStream(target, { fd, autoClose: false }))
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  return statSync(target).size
}

export interface StreamResult {
  /** bytes written to the target */
  readonly bytes: number
  /** the size the format says the target must have for this source */
  readonly expected: number
}

/** `source` encrypted to every recipient into the new file `target`. */
export const encryptFile = async (source: string, target: string, recipients: ReadonlyArray<string>): Promise<StreamResult> => {
  if (recipients.length === 0) throw new Error("no recipient to encrypt to")
  const e = new Encrypter()
  for (const r of recipients) e.addRecipient(r)
  const plainBytes = statSync(source).size
  const out = await e.encrypt(webStream(source))
  const expected = out.size(plainBytes)
  return { bytes: await writeNew(out, target), expected }
}

/** `source` (an age file) decrypted with the first identity that matches into the new file `target`. */
export const decryptFile = async (source: string, target: string, identities: ReadonlyArray<string>): Promise<StreamResult> => {
  const d = new Decrypter()
  for (const id of identities) d.addIdentity(id)
  const cipherBytes = statSync(source).size
  const out = await d.decrypt(webStream(source))
  const expected = out.size(cipherBytes)
  return { bytes: await writeNew(out, target), expected }
}

/** Bytes encrypted in memory (an export download, already in memory). */
export const encryptBytes = async (bytes: Uint8Array, recipients: ReadonlyArray<string>): Promise<Uint8Array> => {
  const e = new Encrypter()
  for (const r of recipients) e.addRecipient(r)
  return e.encrypt(bytes)
}
