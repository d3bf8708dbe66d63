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
  ["Liefertermin", "Lieferdatum", "delivery date"],
  ["Lieferung", "delivery"],
  ["Lieferadresse", "Lieferanschrift", "delivery address", "shipping address"],
  ["Rechnung", "Faktura", "invoice", "bill"],
  ["Rechnungsadresse", "billing address"],
  ["Zahlungsziel", "Zahlungsfrist", "Zahlungsbedingungen", "payment terms", "terms of payment"],
  ["Anzahlung", "Vorauszahlung", "Vorkasse", "prepayment", "advance payment", "down payment"],
  ["Mahnung", "Zahlungserinnerung", "dunning letter", "payment reminder"],
  ["überfällig", "overdue", "past due"],
  ["Skonto", "cash discount", "early payment discount"],
  ["Rabatt", "Nachlass", "Preisnachlass", "discount"],
  ["Gutschrift", "credit note"],
  ["Kunde", "Kundin", "customer", "client"],
  ["Neukunde", "new customer"],
  ["Stammkunde", "Bestandskunde", "existing customer", "regular customer"],
  ["Kundennummer", "customer number"],
  ["Lieferant", "Zulieferer", "supplier", "vendor"],
  ["Verhaltenskodex", "code of conduct"],
  ["Zertifikat", "Zeugnis", "certificate"],
  ["Zoll", "Verzollung", "Zollabfertigung", "customs", "customs clearance"],
  ["Ansprechpartner", "contact person"],
  ["Angebot", "Offerte", "quote", "quotation", "offer"],
  ["Bestellung", "Auftrag", "order", "purchase order"],
  ["Auftragsbestätigung", "Bestellbestätigung", "order confirmation"],
  ["Mindestbestellmenge", "Mindestmenge", "minimum order quantity", "MOQ"],
  ["Artikelnummer", "item number", "part number", "SKU"],
  ["Muster", "Warenprobe", "sample"],
  ["Preis", "price"],
  ["Preisliste", "price list"],
  ["Versand", "shipping", "shipment", "dispatch"],
  ["Lieferschein", "delivery note", "packing slip"],
  ["Packliste", "packing list"],
  ["Wareneingang", "goods receipt", "goods in"],
  ["Bestellnummer", "PO number", "order number"],
  ["Eilauftrag", "Expressauftrag", "rush order", "express order"],
  ["Transportschaden", "transport damage", "shipping damage", "transit damage"],
  ["Traglast", "Belastbarkeit", "load capacity", "maximum load"],
  ["Versandkosten", "Frachtkosten", "shipping costs", "freight costs"],
  ["Spedition", "Spediteur", "carrier", "freight forwarder"],
  ["Palette", "pallet"],
  ["Verpackung", "packaging"],
  ["Lager", "warehouse"],
  ["Lagerbestand", "Bestand", "stock", "inventory"],
  ["Reklamation", "Beanstandung", "Mängelrüge", "complaint"],
  ["Rücksendung", "Retoure", "return"],
  ["Gewährleistung", "Garantie", "warranty", "guarantee"],
  ["Vertrag", "contract", "agreement"],
  ["Kündigung", "termination"],
  ["Stornierung", "Storno", "cancellation"],
  ["Freigabe", "Genehmigung", "approval"],
  ["Frist", "deadline"],
  ["Anfrage", "inquiry", "enquiry", "request"],
  ["Mehrwertsteuer", "Umsatzsteuer", "MwSt", "VAT"],
  ["netto", "net"],
  ["brutto", "gross"],
  ["Mitarbeiter", "employee"],
  ["Urlaub", "vacation", "holiday"]
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

/**
 * The groups a query touches. segments: runs of query tokens (the text's token stream, or one
 * given term); a single-word member never matches a stopword.
 */
export const matchSynonyms = (
  segments: ReadonlyArray<ReadonlyArray<string>>,
  groups: ReadonlyArray<SynonymGroup>,
  languages: ReadonlyArray<Language>
): Array<SynonymMatch> => {
  const out: Array<SynonymMatch> = []
  groups.forEach((group, gi) => {
    const members: Array<number> = []
    const surfaces: Array<string> = []
    group.forEach((member, mi) => {
      for (const seg of segments) {
        for (let i = 0; i + member.length <= seg.length; i++) {
          const window = seg.slice(i, i + member.length)
          if (member.length === 1 && isStopword(window[0] ?? "", languages)) continue
          if (window.every((t, j) => sameWord(t, member[j] ?? ""))) {
            if (!members.includes(mi)) members.push(mi)
            const surface = window.join(" ")
            if (!surfaces.includes(surface)) surfaces.push(surface)
          }
        }
      }
    })
    if (members.length > 0) out.push({ group: gi, members, surfaces })
  })
  return out
}
