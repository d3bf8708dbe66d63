/**
 * age encryption and decryption from one file to a new one, in the format's 64 KiB chunks (a scope
 * file can be GBs: nothing holds the whole file in memory). The target is created exclusively with
 * mode 0600 and fsynced; on a failure the caller removes it.
 *
 * The header (the recipients' stanzas and its MAC) is the library's own (age-encryption): it writes
 * it, and it reads it back and unwraps the file key (Decrypter.decryptHeader). The payload is the
 * format's STREAM, sealed here with Node's ChaCha20-Poly1305 (OpenSSL) instead of the library's
 * JavaScript cipher: the same bytes the library writes and reads (a test decrypts each with the
 * other), at a fraction of the time for a large file (docs/performance.md).
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto"
import { closeSync, createReadStream, createWriteStream, fsyncSync, openSync, readSync, statSync } from "node:fs"
import { Readable } from "node:stream"
import { pipeline } from "node:stream/promises"
import { Decrypter, Encrypter, type Recipient } from "age-encryption"

/** plaintext bytes per STREAM chunk (the format's) */
const CHUNK = 64 * 1024
/** the Poly1305 tag of each chunk */
const TAG = 16
/** the payload's nonce, after the header */
const NONCE = 16
/** how far the header is looked for (a header of many recipients is a few KiB) */
const HEADER_MAX = 1024 * 1024
const READ_BYTES = 1024 * 1024

export interface StreamResult {
  /** bytes written to the target */
  readonly bytes: number
  /** the size the format says the target must have for this source */
  readonly expected: number
}

/** The payload key of the format: HKDF-SHA-256(file key, nonce, "payload"). */
const payloadKey = (fileKey: Uint8Array, nonce: Uint8Array): Buffer =>
  Buffer.from(hkdfSync("sha256", fileKey, nonce, "payload", 32))

/** The chunk nonce: an 11-byte big-endian counter and the last-chunk flag. */
const chunkNonce = (counter: number, last: boolean): Buffer => {
  const n = Buffer.alloc(12)
  n.writeUIntBE(Math.floor(counter / 2 ** 32), 3, 4)
  n.writeUInt32BE(counter >>> 0, 7)
  n[11] = last ? 1 : 0
  return n
}

const seal = (key: Buffer, counter: number, last: boolean, plain: Buffer): Buffer => {
  const c = createCipheriv("chacha20-poly1305", key, chunkNonce(counter, last), { authTagLength: TAG })
  return Buffer.concat([c.update(plain), c.final(), c.getAuthTag()])
}

const open = (key: Buffer, counter: number, last: boolean, sealed: Buffer): Buffer => {
  if (sealed.length < TAG) throw new Error("an age chunk is shorter than its tag")
  const d = createDecipheriv("chacha20-poly1305", key, chunkNonce(counter, last), { authTagLength: TAG })
  d.setAuthTag(sealed.subarray(sealed.length - TAG))
  return Buffer.concat([d.update(sealed.subarray(0, sealed.length - TAG)), d.final()])
}

/**
 * The chunks of `source` in units of `unit` bytes, each with whether it is the last one: a full
 * unit is the last only when nothing follows it; an empty last one only when the source is empty.
 */
async function* units(source: AsyncIterable<Buffer>, unit: number): AsyncGenerator<readonly [Buffer, boolean]> {
  let pending: Buffer = Buffer.alloc(0)
  for await (const data of source) {
    pending = pending.length === 0 ? data : Buffer.concat([pending, data])
    let at = 0
    while (pending.length - at > unit) {
      yield [pending.subarray(at, at + unit), false]
      at += unit
    }
    pending = pending.subarray(at)
  }
  yield [pending, true]
}

const writeNew = async (parts: AsyncIterable<Buffer>, target: string): Promise<number> => {
  const fd = openSync(target, "wx", 0o600)
  try {
    await pipeline(Readable.from(parts), createWriteStream(target, { fd, autoClose: false }))
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  return statSync(target).size
}

/** The library's header for `recipients` and the file key it wrapped (an empty payload's last 32 bytes dropped). */
const headerFor = async (recipients: ReadonlyArray<string>): Promise<{ header: Uint8Array; fileKey: Uint8Array }> => {
  let fileKey: Uint8Array | null = null
  // called with the same file key as every recipient; it adds no stanza
  const keeper: Recipient = {
    wrapFileKey: (key) => {
      fileKey = Uint8Array.from(key)
      return []
    }
  }
  const e = new Encrypter()
  for (const r of recipients) e.addRecipient(r)
  e.addRecipient(keeper)
  const empty = await e.encrypt(new Uint8Array(0))
  if (fileKey === null) throw new Error("the age library wrapped no file key")
  return { header: empty.subarray(0, empty.length - NONCE - TAG), fileKey }
}

/** `source` encrypted to every recipient into the new file `target`. */
export const encryptFile = async (source: string, target: string, recipients: ReadonlyArray<string>): Promise<StreamResult> => {
  if (recipients.length === 0) throw new Error("no recipient to encrypt to")
  const { header, fileKey } = await headerFor(recipients)
  const nonce = randomBytes(NONCE)
  const key = payloadKey(fileKey, nonce)
  const plainBytes = statSync(source).size
  async function* parts(): AsyncGenerator<Buffer> {
    yield Buffer.from(header)
    yield nonce
    let counter = 0
    for await (const [plain, last] of units(createReadStream(source, { highWaterMark: READ_BYTES }), CHUNK)) {
      yield seal(key, counter++, last, plain)
    }
  }
  const chunks = Math.max(1, Math.ceil(plainBytes / CHUNK))
  const expected = header.length + NONCE + plainBytes + TAG * chunks
  return { bytes: await writeNew(parts(), target), expected }
}

/** The bytes of the header at the start of the age file `path` (through the MAC line's newline). */
const readHeader = (path: string): Buffer => {
  const fd = openSync(path, "r")
  try {
    const buf = Buffer.alloc(HEADER_MAX)
    const n = readSync(fd, buf, 0, HEADER_MAX, 0)
    const text = buf.subarray(0, n)
    const mac = text.indexOf("\n---")
    const end = mac < 0 ? -1 : text.indexOf("\n", mac + 1)
    if (end < 0) throw new Error("not an age file: no header end")
    return Buffer.from(text.subarray(0, end + 1))
  } finally {
    closeSync(fd)
  }
}

/** `source` (an age file) decrypted with the first identity that matches into the new file `target`. */
export const decryptFile = async (source: string, target: string, identities: ReadonlyArray<string>): Promise<StreamResult> => {
  const d = new Decrypter()
  for (const id of identities) d.addIdentity(id)
  const header = readHeader(source)
  // the library unwraps the file key and checks the header's MAC
  const fileKey = await d.decryptHeader(header)
  const cipherBytes = statSync(source).size
  const nonce = Buffer.alloc(NONCE)
  const fd = openSync(source, "r")
  try {
    if (readSync(fd, nonce, 0, NONCE, header.length) !== NONCE) throw new Error("the age file ends in its nonce")
  } finally {
    closeSync(fd)
  }
  const key = payloadKey(fileKey, nonce)
  async function* parts(): AsyncGenerator<Buffer> {
    let counter = 0
    for await (const [sealed, last] of units(createReadStream(source, { start: header.length + NONCE, highWaterMark: READ_BYTES }), CHUNK + TAG)) {
      const plain = open(key, counter, last, sealed)
      // the last chunk is empty only when it is the only one (the format)
      if (last && plain.length === 0 && counter > 0) throw new Error("the age file's last chunk is empty")
      counter++
      yield plain
    }
  }
  const payload = cipherBytes - header.length - NONCE
  const full = Math.floor(payload / (CHUNK + TAG))
  const rest = payload % (CHUNK + TAG)
  const expected = payload - TAG * full - (rest > 0 ? TAG : 0)
  return { bytes: await writeNew(parts(), target), expected }
}

/** Bytes encrypted in memory (an export download, already in memory). */
export const encryptBytes = async (bytes: Uint8Array, recipients: ReadonlyArray<string>): Promise<Uint8Array> => {
  const e = new Encrypter()
  for (const r of recipients) e.addRecipient(r)
  return e.encrypt(bytes)
}
