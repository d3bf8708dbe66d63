/** Inputs for the classifier tests: plain proposals and ways to give one a mandatory exception. */
import fc from "fast-check"
import { LARGE_SUBTREE, type ClassifyInput } from "../../../src/decision/policy/classify.js"
import type { MandatoryExceptionName } from "../../../src/decision/policy/classify.js"
import { PAYLOADS } from "../../security/corpus.js"

export const OWN = ["acme.example"]

/** Internal rules with no money, personal data, outside party, hedge, negation or question in them. */
export const PLAIN_STATEMENTS: ReadonlyArray<string> = [
  "Muster gehen immer zuerst an die Qualitätssicherung.",
  "Das Lager schließt freitags um 14 Uhr.",
  "Die Inventur findet jedes Jahr am 30. Dezember statt.",
  "Paletten werden im Hof links gelagert.",
  "Sonderfarben werden nur in Halle 3 lackiert.",
  "Reklamationen werden innerhalb von 48 Stunden beantwortet.",
  "Protokolle liegen spätestens am Folgetag im Teamordner.",
  "Samples always go to quality control first.",
  "The warehouse closes at 2 pm on Fridays.",
  "Every inbound delivery is booked in the ERP the same day.",
  "Meeting notes are shared in the team folder within one day.",
  "Forklifts are charged overnight in hall 2.",
  "Stocktaking takes place on 30 December every year.",
  "Complaints are answered within 48 hours."
]
export const PLAIN_KEYWORDS: ReadonlyArray<string> = ["Lager", "Muster", "Inventur", "Halle", "warehouse", "samples", "ERP", "forklift"]

export const jamie = (quote: string) => ({ kind: "jamie" as const, id: "jamie:m-2024-03-12", quote, timestamp_s: 120, link: "https://jamie.example/m/1" })
export const mail = (quote: string) => ({ kind: "mail" as const, id: "mail:<m1@acme.example>", quote, link: null })
export const manual = (quote: string) => ({ kind: "manual" as const, quote, link: null })

export const PASSING_AUTH = "mx.acme.example; spf=pass smtp.mailfrom=acme.example; dkim=pass header.d=acme.example; dmarc=pass header.from=acme.example"

/** A proposal that classify must call general without exceptions. */
export const plain = (statement: string, over: Partial<ClassifyInput> = {}): ClassifyInput => ({
  proposal: { kind: "rule", statement, source: jamie(statement), keywords: [], relations: [], supersedes: null },
  source: { kind: "jamie" },
  ownDomains: OWN,
  scope: { contradictedBy: [], confirmedNearDuplicates: [], largestSubtree: 0 },
  ...over
})

export const plainInput: fc.Arbitrary<ClassifyInput> = fc.record({
  statement: fc.constantFrom(...PLAIN_STATEMENTS),
  quote: fc.constantFrom(...PLAIN_STATEMENTS),
  keywords: fc.uniqueArray(fc.constantFrom(...PLAIN_KEYWORDS), { maxLength: 4 }),
  viaMail: fc.boolean(),
  subdomain: fc.boolean(),
  subtree: fc.integer({ min: 0, max: LARGE_SUBTREE - 1 })
}).map(({ statement, quote, keywords, viaMail, subdomain, subtree }) => ({
  proposal: { kind: "rule" as const, statement, source: viaMail ? mail(quote) : jamie(quote), keywords, relations: [], supersedes: null },
  source: viaMail
    ? { kind: "mail" as const, sender: `Maria Schmidt <maria@${subdomain ? "mail." : ""}acme.example>`, auth: { from: `maria@${subdomain ? "mail." : ""}acme.example`, authentication_results: PASSING_AUTH } }
    : { kind: "jamie" as const },
  ownDomains: OWN,
  scope: { contradictedBy: [], confirmedNearDuplicates: [], largestSubtree: subtree }
}))

const withStatement = (input: ClassifyInput, extra: string): ClassifyInput =>
  ({ ...input, proposal: { ...input.proposal, statement: `${input.proposal.statement} ${extra}` } })

/** For each mandatory exception, ways to make a plain input carry it. */
export const TRIGGERS: Readonly<Record<MandatoryExceptionName, fc.Arbitrary<(input: ClassifyInput) => ClassifyInput>>> = {
  payment: fc.constantFrom("Skonto 2 % gilt bei Zahlung in 10 Tagen.", "Invoices are paid within 30 days.", "Der Preis beträgt 12,50 EUR.", "Refunds need a receipt.")
    .map((extra) => (input: ClassifyInput) => withStatement(input, extra)),
  secret: fc.constantFrom("Das Passwort liegt bei Maria.", "The API key stays in the vault.", "Passwort: Sommer2024!", "Zugangsdaten bekommt nur die IT.")
    .map((extra) => (input: ClassifyInput) => withStatement(input, extra)),
  contradiction: fc.constantFrom("sales-0042", "sales-0007").map((id) => (input: ClassifyInput) =>
    ({ ...input, scope: { ...input.scope, contradictedBy: [id] } })),
  "external-sensitive": fc.constantFrom(
    { sender: "kunde@outside.example", auth: null },
    { sender: "Maria <maria@acme.example>", auth: { from: "maria@acme.example", authentication_results: "mx.acme.example; dmarc=fail header.from=acme.example" } },
    { sender: null, auth: null },
    { sender: "maria@acme.example.evil.example", auth: null }
  ).map((facts) => (input: ClassifyInput) => ({
    ...input,
    proposal: { ...input.proposal, source: mail(input.proposal.source.quote) },
    source: { kind: "mail" as const, ...facts }
  })),
  injection: fc.constantFrom(...PAYLOADS).map((p) => (input: ClassifyInput) =>
    ({ ...input, proposal: { ...input.proposal, source: { ...input.proposal.source, quote: p.text } } })),
  "unchecked-quote": fc.constant((input: ClassifyInput) =>
    ({ ...input, proposal: { ...input.proposal, source: manual(input.proposal.source.quote) }, source: { kind: "manual" as const } })),
  doubt: fc.constantFrom("Vielleicht gilt das auch für Halle 4.", "This probably applies to hall 4 too.", "Gilt das auch für Halle 4?", "I think this applies to hall 4.")
    .map((extra) => (input: ClassifyInput) => withStatement(input, extra)),
  "large-subtree": fc.integer({ min: LARGE_SUBTREE, max: 10_000 }).map((n) => (input: ClassifyInput) =>
    ({ ...input, scope: { ...input.scope, largestSubtree: n } }))
}
