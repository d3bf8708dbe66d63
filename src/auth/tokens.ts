/** Constant-time comparison of secrets: SHA-256 digests compared with timingSafeEqual. */
import { createHash, createHmac, timingSafeEqual } from "node:crypto"

const digest = (s: string): Buffer => createHash("sha256").update(s, "utf8").digest()

export const sameSecret = (given: string, expected: string): boolean => timingSafeEqual(digest(given), digest(expected))

export const hmacBase64url = (secret: string, data: string): string =>
  createHmac("sha256", secret).update(data, "utf8").digest("base64url")
