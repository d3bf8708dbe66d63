/**
 * Keys of encrypted copies (gaps.md §12 R5): the key pair, streamed file encryption that the
 * library's own Decrypter (what the standard age CLI reads) opens, and the identity from
 * GROUNDNOTE_KEY_DIR without any fallback.
 */
import { randomBytes } from "node:crypto"
import { chmodSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Decrypter, Encrypter } from "age-encryption"
import { Cause, Effect, Exit, Option } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { isAgeRecipient } from "../../src/contracts/keys.js"
import { AGE_HEADER, isAgeFile } from "../../src/keys/header.js"
import { identityFileName, INSTANCE_IDENTITY_FILE, readIdentity } from "../../src/keys/identity-file.js"
import { makeKeyPair, recipientOf } from "../../src/keys/keypair.js"
import { decryptFile, encryptFile } from "../../src/keys/stream-file.js"
import { identityFileText, writeIdentityFile } from "../../src/keys/write-identity.js"
import { tempDir } from "../support/env.js"

let cleanups: Array<() => void> = []
afterEach(() => {
  for (const c of cleanups) c()
  cleanups = []
})
const dir = (): string => {
  const t = tempDir("gn-keys-")
  cleanups.push(t.cleanup)
  return t.dir
}

describe("age keys", () => {
  it("a key pair is X25519: AGE-SECRET-KEY-1… and a 62-character age1… recipient the schema accepts", async () => {
    const pair = await Effect.runPromise(makeKeyPair)
    expect(pair.identity).toMatch(/^AGE-SECRET-KEY-1[0-9A-Z]{58}$/)
    expect(pair.recipient).toMatch(/^age1[0-9a-z]{58}$/)
    expect(isAgeRecipient(pair.recipient)).toBe(true)
    expect(await Effect.runPromise(recipientOf(pair.identity))).toBe(pair.recipient)
    // a wrong checksum, a post-quantum or short recipient is refused
    expect(isAgeRecipient(`${pair.recipient.slice(0, -1)}${pair.recipient.endsWith("q") ? "p" : "q"}`)).toBe(false)
    expect(isAgeRecipient("age1qqqq")).toBe(false)
    expect(await Effect.runPromise(recipientOf("not an identity"))).toBeNull()
  })

  it("a file larger than one chunk is encrypted as a stream to every recipient; each identity decrypts it", async () => {
    const d = dir()
    const a = await Effect.runPromise(makeKeyPair)
    const b = await Effect.runPromise(makeKeyPair)
    const plain = join(d, "plain.bin")
    const data = Buffer.concat([randomBytes(3 * 1024 * 1024 + 17), Buffer.from("Petra Müller, +49 171 5550123")])
    writeFileSync(plain, data)
    const sealed = join(d, "plain.bin.age")
    const result = await encryptFile(plain, sealed, [a.recipient, b.recipient])
    expect(result.bytes).toBe(result.expected)
    expect(statSync(sealed).mode & 0o777).toBe(0o600)
    expect(isAgeFile(sealed)).toBe(true)
    expect(isAgeFile(plain)).toBe(false)
    const bytes = readFileSync(sealed)
    expect(bytes.subarray(0, AGE_HEADER.length).toString("latin1")).toBe(AGE_HEADER)
    expect(bytes.includes(Buffer.from("Petra Müller"))).toBe(false)
    for (const id of [a.identity, b.identity]) {
      const dec = new Decrypter()
      dec.addIdentity(id)
      expect(Buffer.from(await dec.decrypt(new Uint8Array(bytes))).equals(data)).toBe(true)
    }
    const back = join(d, "back.bin")
    const out = await decryptFile(sealed, back, [b.identity])
    expect(out.bytes).toBe(data.length)
    expect(readFileSync(back).equals(data)).toBe(true)
    // a foreign identity decrypts nothing, and the target is never written over
    const c = await Effect.runPromise(makeKeyPair)
    await expect(decryptFile(sealed, join(d, "other.bin"), [c.identity])).rejects.toThrow()
    await expect(encryptFile(plain, sealed, [a.recipient])).rejects.toThrow(/EEXIST/)
  })

  it("the payload sealed here is the library's: at every chunk boundary each side decrypts the other's file, and a changed byte is refused", async () => {
    const d = dir()
    const k = await Effect.runPromise(makeKeyPair)
    const CHUNK = 64 * 1024
    for (const size of [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK, 3 * CHUNK + 5]) {
      const data = randomBytes(size)
      const plain = join(d, `p${size}`)
      writeFileSync(plain, data)
      // ours → the library
      const sealed = join(d, `p${size}.age`)
      const result = await encryptFile(plain, sealed, [k.recipient])
      expect(result.bytes, `size ${size}`).toBe(result.expected)
      const dec = new Decrypter()
      dec.addIdentity(k.identity)
      expect(Buffer.from(await dec.decrypt(new Uint8Array(readFileSync(sealed)))).equals(data), `size ${size}`).toBe(true)
      // the library → ours
      const enc = new Encrypter()
      enc.addRecipient(k.recipient)
      const theirs = join(d, `t${size}.age`)
      writeFileSync(theirs, await enc.encrypt(new Uint8Array(data)))
      const back = join(d, `t${size}.out`)
      const out = await decryptFile(theirs, back, [k.identity])
      expect(out.bytes, `size ${size}`).toBe(size)
      expect(out.expected, `size ${size}`).toBe(size)
      expect(readFileSync(back).equals(data), `size ${size}`).toBe(true)
    }
    // one flipped byte in the payload, a dropped last chunk: refused, never a shorter plaintext
    const data = randomBytes(2 * CHUNK + 9)
    const plain = join(d, "flip")
    writeFileSync(plain, data)
    const sealed = join(d, "flip.age")
    await encryptFile(plain, sealed, [k.recipient])
    const bytes = readFileSync(sealed)
    const flipped = Buffer.from(bytes)
    flipped[flipped.length - 40] = (flipped[flipped.length - 40] ?? 0) ^ 1
    writeFileSync(join(d, "flipped.age"), flipped)
    await expect(decryptFile(join(d, "flipped.age"), join(d, "flipped.out"), [k.identity])).rejects.toThrow()
    writeFileSync(join(d, "cut.age"), bytes.subarray(0, bytes.length - 9 - 16))
    await expect(decryptFile(join(d, "cut.age"), join(d, "cut.out"), [k.identity])).rejects.toThrow()
  })

  it("the identity comes from GROUNDNOTE_KEY_DIR/<scope>.age-identity, else identity-missing (never a fallback)", async () => {
    const d = dir()
    const pair = await Effect.runPromise(makeKeyPair)
    const missing = async (env: Record<string, string | undefined>, scope: string | null) => {
      const exit = await Effect.runPromiseExit(readIdentity(env, scope))
      expect(Exit.isFailure(exit)).toBe(true)
      if (Exit.isFailure(exit)) expect(Option.getOrThrow(Cause.failureOption(exit.cause)).code).toBe("identity-missing")
      return exit
    }
    await missing({}, "sales")
    await missing({ GROUNDNOTE_KEY_DIR: d }, "sales")
    writeFileSync(join(d, "sales.age-identity"), "# only a comment\n")
    await missing({ GROUNDNOTE_KEY_DIR: d }, "sales")
    writeFileSync(join(d, "sales.age-identity"), identityFileText(pair.identity, pair.recipient, "2026-12-06T00:00:00Z"))
    expect(await Effect.runPromise(readIdentity({ GROUNDNOTE_KEY_DIR: d }, "sales"))).toEqual([pair.identity])
    // another scope's file is not used for this one; the instance has its own name
    await missing({ GROUNDNOTE_KEY_DIR: d }, "ops")
    await missing({ GROUNDNOTE_KEY_DIR: d }, null)
    expect(identityFileName(null)).toBe(INSTANCE_IDENTITY_FILE)
    expect(identityFileName("ops")).toBe("ops.age-identity")
  })

  it("the identity file is written 0600 and never over an existing file", async () => {
    const d = dir()
    const path = join(d, "id.txt")
    writeIdentityFile(path, "x\n")
    expect(statSync(path).mode & 0o777).toBe(0o600)
    expect(() => writeIdentityFile(path, "y\n")).toThrow(/EEXIST/)
    expect(readFileSync(path, "utf8")).toBe("x\n")
    chmodSync(path, 0o600)
  })
})
