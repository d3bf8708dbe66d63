/**
 * Verbs with a particle in a question, as the lexicon holds them (architecture.md §7 step 2):
 * English phrasal verbs (hand in, fill out), which stand together, and German separable verbs,
 * whose particle ends the clause apart from the verb (heben wir … auf → aufheben; gibt … frei →
 * freigeben) or sits before a "zu" inside it (einzureichen → einreichen). Which join is a verb is
 * the lexicon's word: a join it does not hold is no verb.
 */
import { isAlpha } from "./text.js"

/** The particles of English phrasal verbs: stopwords that may end a phrase of two words. */
export const EN_PARTICLES: ReadonlySet<string> = new Set(["in", "off", "on", "out", "up", "down", "over"])

/** A phrase of a word and an English particle (handed in, signs off). */
export const isPhrasalVerb = (tokens: ReadonlyArray<string>): boolean =>
  tokens.length === 2 && EN_PARTICLES.has(tokens[1] ?? "")

/** The particles of German separable verbs (ab|geben, frei|geben, zurück|zahlen). */
export const DE_PARTICLES: ReadonlySet<string> = new Set([
  "ab", "an", "auf", "aus", "bei", "ein", "fest", "frei", "her", "hin", "los", "mit", "nach", "vor", "weg", "zu",
  "zurück", "um", "hoch", "weiter", "zusammen", "bereit", "fort", "vorbei", "heim", "hinzu", "dazu"
])

/** Each German particle with "zu" after it (einzu|reichen). */
const WITH_ZU: ReadonlyArray<readonly [string, string]> = [...DE_PARTICLES].map((p) => [p, `${p}zu`])

const ENDINGS = ["est", "et", "st", "t", "en", "e", "n"]

/**
 * The infinitives a present-tense form may have, unverified: the form itself (wir heben), its
 * stem with -en or -n (legt → legen, sammle → sammeln), and with the vowel a strong verb changes
 * given back (gibt → geben, sieht → sehen, hält → halten, läuft → laufen).
 */
export const infinitivesOf = (form: string): Array<string> => {
  const stems = new Set<string>([form])
  for (const e of ENDINGS) if (form.endsWith(e) && form.length - e.length >= 2) stems.add(form.slice(0, -e.length))
  const out = new Set<string>()
  for (const s of stems) {
    for (const v of [s, s.replace("ie", "e"), s.replace("i", "e"), s.replace("äu", "au"), s.replace("ä", "a")]) {
      out.add(`${v}en`)
      out.add(`${v}n`)
    }
  }
  if (form.endsWith("en") || form.endsWith("ln") || form.endsWith("rn")) out.add(form)
  return [...out]
}

export interface JoinedVerb {
  /** the question's words, as it spells them (the verb and its particle, or the one word) */
  readonly surface: string
  /** the verb as the lexicon holds it (aufheben) */
  readonly verb: string
  /** the index of the question's verb in its segment */
  readonly at: number
}

/**
 * The German separable verbs of one segment of a question that `holds` (the lexicon's German
 * side) knows: a particle that ends the segment joined to a word before it, and a word made of a
 * particle, "zu" and a verb. At most one join per word, the first infinitive held.
 */
export const joinedVerbs = (
  segment: ReadonlyArray<string>,
  holds: (verb: string) => boolean,
  isFunctionWord: (word: string) => boolean
): Array<JoinedVerb> => {
  const out: Array<JoinedVerb> = []
  const last = segment.length - 1
  const particle = segment[last] ?? ""
  const separated = segment.length >= 2 && DE_PARTICLES.has(particle)
  for (const [i, word] of segment.entries()) {
    if (word.length < 3 || !isAlpha(word)) continue
    if (separated && i < last && !isFunctionWord(word)) {
      const verb = infinitivesOf(word).map((inf) => particle + inf).find(holds)
      if (verb !== undefined) {
        out.push({ surface: `${word} ${particle}`, verb, at: i })
        continue
      }
    }
    if (word.length < 8 || !word.includes("zu", 2)) continue
    for (const [p, pzu] of WITH_ZU) {
      if (!word.startsWith(pzu)) continue
      const verb = p + word.slice(pzu.length)
      if (verb.length - p.length >= 4 && holds(verb)) {
        out.push({ surface: word, verb, at: i })
        break
      }
    }
  }
  return out
}
