/** The secret scan (invariant 12): corpora, fields, fingerprints, properties. */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  SECRET_KINDS,
  scanSecrets,
  secretFindings,
  secretFingerprint,
  secretMessage,
  type SecretHit
} from "../../src/security/secrets.js"
import { BUSINESS_MAILS } from "./business-corpus.js"
import { FIELDS, NEAR_MISSES, SECRETS, TEMPLATES } from "./secrets-corpus.js"

const scanOne = (text: string, field = "statement"): ReadonlyArray<SecretHit> => scanSecrets([{ field, text }])
const show = (text: string, hits: ReadonlyArray<SecretHit>) => hits.map((h) => `${h.kind}@${h.field}:${text.slice(h.start, h.end)}`)

describe("secret corpus", () => {
  it(`refuses each of the ${SECRETS.length} secrets with its kind, in every template and in every field`, () => {
    expect(SECRETS.length).toBeGreaterThanOrEqual(100)
    // every kind of the closed list is exercised
    expect(new Set(SECRETS.map((s) => s.kind))).toEqual(new Set(SECRET_KINDS))
    SECRETS.forEach((secret, i) => {
      for (const template of TEMPLATES) {
        const text = template.replace("{S}", secret.text)
        const field = FIELDS[i % FIELDS.length] ?? "statement"
        const hits = scanOne(text, field)
        expect(hits.map((h) => [h.field, h.kind]), `${secret.kind} in ${JSON.stringify(template.slice(0, 30))}: ${show(text, hits).join(", ")}`)
          .toEqual([[field, secret.kind]])
        // the hit lies inside the inserted secret
        const at = template.indexOf("{S}")
        const hit = hits[0] as SecretHit
        expect(hit.start).toBeGreaterThanOrEqual(at)
        expect(hit.end).toBeLessThanOrEqual(at + secret.text.length)
      }
    })
  })

  it("names only the field that holds the secret when several fields are scanned", () => {
    SECRETS.forEach((secret, i) => {
      const target = FIELDS[i % FIELDS.length] ?? "statement"
      const fields = FIELDS.map((field) => ({
        field,
        text: field === target ? `Kurze Notiz: ${secret.text}` : NEAR_MISSES[(i + field.length) % NEAR_MISSES.length] ?? ""
      }))
      expect(scanSecrets(fields).map((h) => [h.field, h.kind])).toEqual([[target, secret.kind]])
    })
  })

  it(`accepts each of the ${NEAR_MISSES.length} near-misses alone, in every template and all together`, () => {
    expect(NEAR_MISSES.length).toBeGreaterThanOrEqual(100)
    for (const text of NEAR_MISSES) {
      expect(show(text, scanOne(text)), text).toEqual([])
      for (const template of TEMPLATES) {
        const embedded = template.replace("{S}", text)
        expect(show(embedded, scanOne(embedded, "source.text")), embedded).toEqual([])
      }
    }
    const all = NEAR_MISSES.join("\n")
    expect(show(all, scanOne(all, "source.text"))).toEqual([])
    expect(scanSecrets(NEAR_MISSES.map((text, i) => ({ field: `segments[${i}].text`, text })))).toEqual([])
  })

  it(`accepts each of the ${BUSINESS_MAILS.length} ordinary business mails and meeting lines`, () => {
    for (const text of BUSINESS_MAILS) expect(show(text, scanOne(text, "source.text")), text).toEqual([])
  })

  it("finds every secret of a long text, in order", () => {
    const text = SECRETS.map((s, i) => `${NEAR_MISSES[i % NEAR_MISSES.length] ?? ""}\n${s.text}\n`).join("\n")
    const hits = scanOne(text, "source.text")
    expect(hits.map((h) => h.kind)).toEqual(SECRETS.map((s) => s.kind))
  })
})

describe("a random value near a secret word, whatever separates them", () => {
  const VALUE = "wJa7rXUtnFEMIK7MDENGbPxRfiCY4xq9Lm2Tz8Vd"
  const WORDS = ["key", "Key", "secret", "token", "password", "Passwort", "Schlüssel", "Kennwort", "API-Key", "Zugangstoken", "access token"]
  const GAPS = [" ", "  ", " - ", " -> ", " → ", " – ", "\n", " (prod) ", " for the shop ", " für das Lager ", " des Kontos ist ", " is now "]

  it("finds the value after each secret word with each gap, in a sentence of each language", () => {
    for (const word of WORDS) {
      for (const gap of GAPS) {
        for (const text of [`Hallo Jonas, hier ${word}${gap}${VALUE} bitte sicher ablegen`, `Hi Tom, the new ${word}${gap}${VALUE}, keep it safe`]) {
          // after a password word and "ist" the password rule names it first
          const hits = scanOne(text).map((h) => ({ ...h, kind: h.kind === "password" ? "high-entropy" : h.kind }))
          expect(show(text, hits), text).toEqual([`high-entropy@statement:${VALUE}`])
        }
      }
    }
  })

  it("finds the value before a secret word that ends its clause", () => {
    for (const text of [`${VALUE} ist der API-Schlüssel.`, `${VALUE} (AWS secret key)`, `${VALUE} is our new token.`, `Zugang: ${VALUE} – Passwort`]) {
      expect(show(text, scanOne(text)), text).toEqual([`high-entropy@statement:${VALUE}`])
    }
  })

  it("names a 40-character AWS secret after its label with only spaces between as aws-secret-key", () => {
    for (const label of ["aws secret key", "AWS Secret Access Key", "aws_secret_access_key", "secret key"]) {
      const text = `${label} ${VALUE}`
      expect(show(text, scanOne(text)), text).toEqual([`aws-secret-key@statement:${VALUE}`])
    }
  })

  it("stays quiet on ordinary words, ids and hashes without a secret word right there", () => {
    for (const text of [
      `Key Account Manager Frau Schmidt, Auftrag ${VALUE}`,
      `Die Schlüsselkunden ${VALUE} bekommen Skonto.`,
      `Token-Bucket ${VALUE}`,
      `The public key ${VALUE} is attached.`,
      `API key rotated in commit 3f2a9c1d0e4b5a6978c1d2e3f4a5b6c7d8e9f0a1`,
      `Der Schlüssel liegt beim Pförtner. ${VALUE}`,
      `Der Schlüssel für das Lager liegt beim Pförtner im Fach ${VALUE}`,
      `Passwort: bitte eintragen\n\n\n${VALUE}`,
      `${VALUE}, Passwort bleibt unverändert.`,
      `Bestellung ${VALUE} vom Kunden mit dem Schlüssel.`,
      `Token: abgelaufen ${VALUE}`,
      `Secret Santa ${VALUE}`
    ]) expect(show(text, scanOne(text)), text).toEqual([])
  })

  it("a value another pattern names is the one the word labels: a serial number after it stays quiet", () => {
    const token = "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"
    const text = `The key ${token} question is whether SN-7F3K-22Q9-XP41 is still under warranty.`
    expect(show(text, scanOne(text))).toEqual([`api-key@statement:${token}`])
  })
})

describe("what a hit and a refusal carry", () => {
  it("a hit holds field, kind and offsets, never the secret; the message names field and kind only", () => {
    for (const secret of SECRETS) {
      const hits = scanOne(`Bitte beachten: ${secret.text}`, "source.quote")
      expect(hits.length).toBe(1)
      const hit = hits[0] as SecretHit
      expect(Object.keys(hit).sort()).toEqual(["end", "field", "kind", "start"])
      const secretPart = `Bitte beachten: ${secret.text}`.slice(hit.start, hit.end)
      expect(secretPart.length).toBeGreaterThan(3)
      expect(JSON.stringify(hit)).not.toContain(secretPart)
      const message = secretMessage(hits)
      expect(message).toContain(`source.quote (${secret.kind})`)
      expect(message).not.toContain(secretPart)
    }
    expect(secretMessage([{ field: "statement", kind: "password" }, { field: "statement", kind: "jwt" }, { field: "speaker", kind: "password" }]))
      .toBe("a secret was found and nothing was stored: statement (password, jwt); speaker (password). Remove the secret from these fields and send again")
  })

  it("secretFingerprint is HMAC-SHA256 of the matched text under the salt, hex; findings carry it instead of the text", () => {
    expect(secretFingerprint("salt", "Sommer2024")).toMatch(/^[0-9a-f]{64}$/)
    expect(secretFingerprint("salt", "Sommer2024")).not.toBe(secretFingerprint("pepper", "Sommer2024"))
    expect(secretFingerprint(Buffer.from("salt"), "Sommer2024")).toBe(secretFingerprint("salt", "Sommer2024"))
    // a known HMAC-SHA256 vector (RFC 4231 test case 2)
    expect(secretFingerprint("Jefe", "what do ya want for nothing?")).toBe("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    const findings = secretFindings([
      { field: "statement", text: "Das Passwort für das Portal ist Sommer2024!" },
      { field: "source.quote", text: "Passwort: Sommer2024!" },
      { field: "speaker", text: "Maria" }
    ], "salt")
    expect(findings).toEqual([
      { field: "statement", kind: "password", fingerprint: secretFingerprint("salt", "Sommer2024") },
      { field: "source.quote", kind: "password", fingerprint: secretFingerprint("salt", "Sommer2024") }
    ])
    expect(JSON.stringify(findings)).not.toContain("Sommer2024")
  })

  it("scans nothing in empty fields and no fields", () => {
    expect(scanSecrets([])).toEqual([])
    expect(scanSecrets([{ field: "statement", text: "" }])).toEqual([])
  })
})

describe("properties", () => {
  /** Business text: sentences from the near-miss corpus and plain business words. */
  const WORDS = [
    "Lieferung", "Kunde", "Rechnung", "Angebot", "Hakenleiste", "schwarz", "Palette", "KW", "14", "2024-03-12", "12,50",
    "EUR", "Stück", "delivery", "supplier", "invoice", "order", "net", "30", "days", "approval", "the", "and", "für", "und",
    "Passwortrichtlinie", "Schlüsselübergabe", "Token-Bucket", "HL-400-BLK", "#1A2B3C", "+49", "221", "555-0134", "AB-2024-00017"
  ]
  const piece = fc.oneof(fc.constantFrom(...NEAR_MISSES), fc.constantFrom(...WORDS))
  const businessText = fc.array(fc.tuple(piece, fc.constantFrom(" ", "\n", ". ", ", ")), { minLength: 1, maxLength: 40 })
    .map((parts) => parts.map(([p, sep]) => `${p}${sep}`).join(""))

  it("random business text without secrets passes", () => {
    fc.assert(fc.property(businessText, (text) => {
      expect(show(text, scanOne(text, "source.text"))).toEqual([])
    }), { numRuns: 300 })
  })

  it("a secret inserted at any word boundary of such text is found there", () => {
    fc.assert(fc.property(businessText, fc.nat(), fc.constantFrom(...SECRETS), fc.constantFrom(" ", "\n"), (text, n, secret, sep) => {
      const boundaries = [0, ...[...text.matchAll(/\s/g)].map((m) => m.index + 1), text.length]
      const at = boundaries[n % boundaries.length] ?? 0
      const inserted = `${text.slice(0, at)}${sep}${secret.text}${sep}${text.slice(at)}`
      const start = at + sep.length
      const hits = scanOne(inserted, "source.text")
      const inside = hits.filter((h) => h.start < start + secret.text.length && start < h.end)
      expect(inside.length, `${secret.kind} not found in ${JSON.stringify(inserted)}`).toBeGreaterThan(0)
      // nothing else is reported
      expect(hits.length).toBe(inside.length)
    }), { numRuns: 500 })
  })
})
