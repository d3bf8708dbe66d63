/**
 * German derivations of a question's word (architecture.md §7 step 2): a verb's noun in -ung and
 * its past participle, and back (melden ~ Meldung ~ gemeldet, prüfen ~ Prüfung ~ geprüft,
 * einreichen ~ eingereicht, genehmigen ~ genehmigt, kalibrieren ~ kalibriert). Rules are often
 * written in the passive or as nouns ("Unfälle werden gemeldet", "Freigabe durch QS"), questions
 * with the verb. The forms are made by the regular patterns only, unverified: a form no rule of
 * the scope holds is dropped by the vocabulary check every expansion passes (a strong verb's
 * wrong participle, abschließen → abgeschließt, is never searched).
 */
import { DE_PARTICLES } from "./particles.js"
import { isAlpha } from "./text.js"

/** Inseparable prefixes: their participles take no ge- (bestellt, verpackt, genehmigt). */
const INSEPARABLE = ["be", "ge", "er", "ver", "zer", "ent", "emp", "miss"]

/** The verb stems a word may come from: melden, Meldung, gemeldet → meld. */
const verbStems = (w: string): Array<string> => {
  const out: Array<string> = []
  const participleEnd = w.endsWith("et") ? -2 : -1
  if (w.endsWith("ung") && w.length >= 7) out.push(w.slice(0, -3))
  if (w.endsWith("ungen") && w.length >= 9) out.push(w.slice(0, -5))
  if ((w.endsWith("ern") || w.endsWith("eln")) && w.length >= 6) out.push(w.slice(0, -1))
  else if (w.endsWith("en") && w.length >= 6) out.push(w.slice(0, -2))
  if (w.endsWith("t") && w.length >= 7) {
    if (w.startsWith("ge")) out.push(w.slice(2, participleEnd))
    for (const p of DE_PARTICLES) if (w.startsWith(`${p}ge`) && w.length >= p.length + 6) out.push(p + w.slice(p.length + 2, participleEnd))
    if (w.endsWith("iert")) out.push(w.slice(0, -1))
    else if (INSEPARABLE.some((p) => w.startsWith(p)) && !w.endsWith("heit") && !w.endsWith("keit")) out.push(w.slice(0, participleEnd))
  }
  return out.filter((s) => s.length >= 3)
}

/** The past participle of a weak verb's stem: gemeldet, eingereicht, genehmigt, kalibriert. */
const participleOf = (stem: string): string => {
  const t = /[dt]$/.test(stem) ? "et" : "t"
  if (stem.endsWith("ier") || INSEPARABLE.some((p) => stem.startsWith(p))) return stem + t
  for (const p of DE_PARTICLES) if (stem.startsWith(p) && stem.length - p.length >= 3) return `${p}ge${stem.slice(p.length)}${t}`
  return `ge${stem}${t}`
}

/** The word's derivations (infinitive, noun in -ung, past participle), the word itself left out. */
export const derivationsOf = (word: string): Array<string> => {
  if (!isAlpha(word)) return []
  const out = new Set<string>()
  for (const s of verbStems(word)) {
    out.add(s + ((s.endsWith("er") || s.endsWith("el")) && !s.endsWith("ier") ? "n" : "en"))
    out.add(`${s}ung`)
    out.add(participleOf(s))
  }
  out.delete(word)
  return [...out]
}
