/**
 * The secret scan (src/security/secrets.ts) over a 5 MB source text of business lines (the
 * largest text a source may bring) and over 5 MB without spaces (a base64 blob); median of 5 runs.
 */
import { scanSecrets } from "../src/security/secrets.js"
import { stats } from "./support.js"

const LINES = [
  "Die Lieferung an Kunde Müller GmbH erfolgt nur nach Freigabe durch den Vertrieb.",
  "Order PO-2024-118734 ships on 2024-03-12, price 12,50 EUR net, SKU HL-400-BLK-XL.",
  "Die Passwortrichtlinie verlangt 12 Zeichen; der Schlüssel liegt beim Pförtner.",
  "Key Account: Müller GmbH, Telefon +49 221 12345678, IBAN DE89 3704 0044 0532 0130 00.",
  "Please confirm the delivery date by Friday; Token: 3 Stück pro Teilnehmer.",
  "Siehe https://www.example.com/produkte/hakenleiste?farbe=schwarz&groesse=xl und Commit 3f2a9c1d0e4b."
]

const median = (xs: Array<number>): number => stats(xs).median

const time = (text: string): { ms: number; hits: number } => {
  const runs: Array<number> = []
  let hits = 0
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now()
    hits = scanSecrets([{ field: "source.text", text }]).length
    runs.push(performance.now() - t0)
  }
  return { ms: median(runs), hits }
}

export const secretsBench = async (): Promise<void> => {
  const size = 5_000_000
  let business = ""
  for (let i = 0; business.length < size; i++) business += `${LINES[i % LINES.length] ?? ""}\n`
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
  const blob = Array.from({ length: size }, (_, i) => alphabet[(Math.imul(i, 2654435761) >>> 7) % 64]).join("")
  const withSecrets = business.slice(0, size - 2000) + "\nPasswort: Sommer2024!\nAKIAQ2W3E4R5T6Y7U8I9\n"
  console.log("\nsecret scan (median of 5 runs)")
  console.log("text                          | MB   | ms    | MB/s  | hits")
  for (const [name, text] of [["business lines", business], ["base64 blob, no spaces", blob], ["business lines + 2 secrets", withSecrets]] as const) {
    const r = time(text)
    const mb = text.length / 1_000_000
    console.log(`${name.padEnd(29)} | ${mb.toFixed(1).padStart(4)} | ${r.ms.toFixed(0).padStart(5)} | ${(mb / (r.ms / 1000)).toFixed(1).padStart(5)} | ${r.hits}`)
  }
}
