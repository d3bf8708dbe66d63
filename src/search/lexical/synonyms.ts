/**
 * Synonym groups of stage a (architecture.md §7 step 2): a small built-in German/English
 * business list plus search.synonyms, case-insensitive. Groups that share a member are merged.
 * A member matches the query when its words follow each other in the query, each word equal to
 * the query word or one inflection away from it (Lieferzeiten ~ Lieferzeit, invoices ~ invoice).
 */
import type { Language } from "./options.js"
import { isStopword } from "./stopwords.js"
import { fold, spellingOut, tokenize } from "./text.js"

export const BUILTIN_SYNONYMS: ReadonlyArray<ReadonlyArray<string>> = [
  ["Lieferzeit", "Lieferfrist", "Lieferdauer", "delivery time", "lead time"],
  ["Faktura", "bill"],
  ["Zahlungsziel", "Zahlungsfrist", "Zahlungsbedingungen", "payment terms", "terms of payment"],
  ["Anzahlung", "Vorauszahlung", "Vorkasse", "prepayment", "advance payment", "down payment"],
  ["Mahnung", "Zahlungserinnerung", "dunning letter", "payment reminder"],
  ["Skonto", "cash discount", "early payment discount"],
  ["Nachlass", "discount"],
  ["Kundin", "client"],
  ["Stammkunde", "Bestandskunde", "existing customer"],
  ["Zulieferer", "vendor"],
  ["Zeugnis", "certificate"],
  ["Zoll", "Verzollung", "Zollabfertigung", "customs", "customs clearance"],
  ["Angebot", "Offerte", "quote", "quotation", "offer"],
  ["Auftrag", "purchase order"],
  ["Auftragsbestätigung", "Bestellbestätigung"],
  ["Mindestbestellmenge", "Mindestmenge", "minimum order quantity", "MOQ"],
  ["Artikelnummer", "item number", "part number", "SKU"],
  ["Lieferschein", "delivery note", "packing slip"],
  ["Wareneingang", "goods receipt", "goods in"],
  ["Bestellnummer", "PO number", "order number"],
  ["Eilauftrag", "Expressauftrag", "rush order", "express order"],
  ["Transportschaden", "transport damage", "shipping damage", "transit damage"],
  ["Traglast", "Belastbarkeit", "load capacity", "maximum load"],
  ["Versandkosten", "Frachtkosten", "shipping costs", "freight costs"],
  ["Spedition", "Spediteur", "carrier", "freight forwarder"],
  ["Reklamation", "Beanstandung", "Mängelrüge", "complaint"],
  ["Gewährleistung", "Garantie", "warranty", "guarantee"],
  ["Vertrag", "contract", "agreement"],
  ["Anfrage", "inquiry", "enquiry", "request"],
  ["Mehrwertsteuer", "VAT"]
]

/** A merged group: its members as lowercase token lists. */
export type SynonymGroup = ReadonlyArray<ReadonlyArray<string>>

/** The built-in groups (optional) and the configured ones, merged where they share a member. */
export const synonymGroups = (
  configured: ReadonlyArray<ReadonlyArray<string>>,
  builtin: ReadonlyArray<ReadonlyArray<string>> = BUILTIN_SYNONYMS
): Array<SynonymGroup> => {
  const groups = [...builtin, ...configured]
    .map((g) => g.map(tokenize).filter((m) => m.length > 0))
    .filter((g) => g.length >= 2)
  const parent = groups.map((_, i) => i)
  const find = (i: number): number => {
    while (parent[i] !== i) i = parent[i] = parent[parent[i] ?? i] ?? i
    return i
  }
  const owner = new Map<string, number>()
  groups.forEach((g, i) => {
    for (const m of g) {
      const key = m.map((t) => spellingOut(fold(t))).join(" ")
      const o = owner.get(key)
      if (o === undefined) owner.set(key, i)
      else parent[find(i)] = find(o)
    }
  })
  const merged = new Map<number, Map<string, ReadonlyArray<string>>>()
  groups.forEach((g, i) => {
    const root = find(i)
    const members = merged.get(root) ?? new Map<string, ReadonlyArray<string>>()
    for (const m of g) {
      const key = m.join(" ")
      if (!members.has(key)) members.set(key, m)
    }
    merged.set(root, members)
  })
  return [...merged.values()].map((m) => [...m.values()])
}

/** A word as the synonym match compares it: folded and spelled out, and its suffix strips. */
export interface Normal {
  readonly form: string
  /** every single-suffix strip of the form (not only the first) */
  readonly strips: ReadonlyArray<string>
}

const normals = new Map<string, Normal>()
export const normal = (t: string): Normal => {
  const hit = normals.get(t)
  if (hit !== undefined) return hit
  const form = spellingOut(fold(t))
  const strips: Array<string> = []
  for (const s of ["ern", "en", "er", "es", "n", "e", "s", "ing", "ed"]) {
    if (form.endsWith(s) && form.length - s.length >= 3) strips.push(form.slice(0, form.length - s.length))
  }
  if (normals.size >= 100_000) normals.clear()
  const n = { form, strips }
  normals.set(t, n)
  return n
}

/** A query word matches a member word when equal or one inflection apart. */
export const sameWord = (query: string, member: string): boolean => {
  const q = normal(query)
  const m = normal(member)
  return q.form === m.form || q.strips.includes(m.form) || m.strips.includes(q.form)
}

export interface SynonymMatch {
  /** index into the groups */
  readonly group: number
  /** the members that matched, by index in the group */
  readonly members: ReadonlyArray<number>
  /** the query words that matched, as the query spells them */
  readonly surfaces: ReadonlyArray<string>
}

/** A member of a group, by index: [group, member]. */
type MemberAt = readonly [number, number]

interface FirstWordIndex {
  /** members by the form of their first word */
  readonly byForm: ReadonlyMap<string, ReadonlyArray<MemberAt>>
  /** members by each strip of their first word */
  readonly byStrip: ReadonlyMap<string, ReadonlyArray<MemberAt>>
}

const indexes = new WeakMap<ReadonlyArray<SynonymGroup>, FirstWordIndex>()
const add = (m: Map<string, Array<MemberAt>>, k: string, at: MemberAt) => {
  const list = m.get(k)
  if (list === undefined) m.set(k, [at])
  else list.push(at)
}
/** The members of `groups` by their first word, made once per groups array. */
const indexOf = (groups: ReadonlyArray<SynonymGroup>): FirstWordIndex => {
  const known = indexes.get(groups)
  if (known !== undefined) return known
  const byForm = new Map<string, Array<MemberAt>>()
  const byStrip = new Map<string, Array<MemberAt>>()
  groups.forEach((group, gi) =>
    group.forEach((member, mi) => {
      const first = member[0]
      if (first === undefined) return
      const n = normal(first)
      add(byForm, n.form, [gi, mi])
      for (const s of n.strips) add(byStrip, s, [gi, mi])
    })
  )
  const index = { byForm, byStrip }
  indexes.set(groups, index)
  return index
}

/**
 * The members whose first word is the same word (sameWord) as some token of the segments, by
 * group, each group's members ascending: sameWord(q, m) holds exactly when m's form is q's form or
 * one of q's strips, or q's form is one of m's strips.
 */
const candidatesOf = (segments: ReadonlyArray<ReadonlyArray<string>>, groups: ReadonlyArray<SynonymGroup>): Map<number, Set<number>> => {
  const { byForm, byStrip } = indexOf(groups)
  const out = new Map<number, Set<number>>()
  const take = (list: ReadonlyArray<MemberAt> | undefined) => {
    if (list === undefined) return
    for (const [gi, mi] of list) {
      const members = out.get(gi)
      if (members === undefined) out.set(gi, new Set([mi]))
      else members.add(mi)
    }
  }
  for (const seg of segments) {
    for (const t of seg) {
      const q = normal(t)
      take(byForm.get(q.form))
      for (const s of q.strips) take(byForm.get(s))
      take(byStrip.get(q.form))
    }
  }
  return out
}

/**
 * The groups a query touches. segments: runs of query tokens (the text's token stream, or one
 * given term); a single-word member never matches a stopword. Only the members whose first word
 * is one of the query's words are tried (an index of the first words, made once per groups
 * array); the answer is the one of trying every member, in the same order.
 */
export const matchSynonyms = (
  segments: ReadonlyArray<ReadonlyArray<string>>,
  groups: ReadonlyArray<SynonymGroup>,
  languages: ReadonlyArray<Language>
): Array<SynonymMatch> => {
  const out: Array<SynonymMatch> = []
  const candidates = candidatesOf(segments, groups)
  for (const gi of [...candidates.keys()].sort((a, b) => a - b)) {
    const group = groups[gi] ?? []
    const members: Array<number> = []
    const surfaces: Array<string> = []
    for (const mi of [...(candidates.get(gi) ?? [])].sort((a, b) => a - b)) {
      const member = group[mi] ?? []
      for (const seg of segments) {
        for (let i = 0; i + member.length <= seg.length; i++) {
          if (member.length === 1 && isStopword(seg[i] ?? "", languages)) continue
          let same = true
          for (let j = 0; j < member.length && same; j++) same = sameWord(seg[i + j] ?? "", member[j] ?? "")
          if (same) {
            if (!members.includes(mi)) members.push(mi)
            const surface = seg.slice(i, i + member.length).join(" ")
            if (!surfaces.includes(surface)) surfaces.push(surface)
          }
        }
      }
    }
    if (members.length > 0) out.push({ group: gi, members, surfaces })
  }
  return out
}
