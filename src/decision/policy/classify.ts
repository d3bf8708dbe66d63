/**
 * The classifier of the approval modes (gaps.md §10, invariants 2 and 12): pure, deterministic,
 * versioned. It reads a proposal, the facts of its source and the facts of its scope that the
 * caller read from the database, and says which class the proposal has and which mandatory
 * exceptions apply — each with the sentence a person reads on the approval page. Whether the
 * policy may adopt is decideOutcome's answer (outcome.ts); classify never looks at a mode.
 *
 * Classes (first that applies): payment (money: payments, invoices, bank details, prices,
 * discounts, amounts), personal (personal data: health, salary, birth dates, private contacts,
 * HR files), external (an outside party: a customer or supplier relation, or words naming
 * customers, suppliers, partners, authorities; or a mail from outside), else general.
 *
 * Mandatory exceptions (always a person, in every mode): payment, secret (a secret or talk of
 * credentials), contradiction (a confirmed rule linked by contradicts, or a near-duplicate
 * confirmed rule with the opposite polarity), external-sensitive (a mail from outside the own
 * domains, of unknown sender, or whose authentication results do not pass), injection (the
 * injection signals of statement or quote), unchecked-quote (manual source), doubt (hedging
 * words de/en, a question mark), large-subtree (the proposal concerns an entity with
 * LARGE_SUBTREE or more entities in its subtree).
 *
 * A change of any rule here is a new RULESET.
 */
import { MANDATORY_EXCEPTIONS } from "../../contracts/schemas.js"
import type { ProposalRequest } from "../../domain/proposal-schemas.js"
import { scanSecrets } from "../../security/secrets.js"
import { injectionSignals } from "../../security/signals.js"

export const RULESET = "gn-1" as const
export type Ruleset = typeof RULESET

export const PROPOSAL_CLASSES = ["general", "payment", "personal", "external"] as const
export type ProposalClass = (typeof PROPOSAL_CLASSES)[number]

export type MandatoryExceptionName = (typeof MANDATORY_EXCEPTIONS)[number]

/** A mandatory exception and the sentence a person reads. */
export interface MandatoryException {
  readonly exception: MandatoryExceptionName
  readonly reason: string
}

/** An entity subtree this size or larger makes a proposal large-subtree. */
export const LARGE_SUBTREE = 25

/** source_auth of a mail source (architecture.md §6.2): the From header and the Authentication-Results. */
export interface SourceAuth {
  readonly from: string
  readonly authentication_results: string
}

/** What the stored source says about where the proposal's evidence came from. */
export type SourceFacts =
  | { readonly kind: "mail"; readonly sender: string | null; readonly auth: SourceAuth | null }
  | { readonly kind: "jamie" }
  | { readonly kind: "manual" }

/** What the caller read from the scope before classifying. */
export interface ScopeFacts {
  /** confirmed rules tied to the proposal's rule by a contradicts link (either direction) */
  readonly contradictedBy: ReadonlyArray<string>
  /** confirmed rules among the proposal's near duplicates, with their current statements */
  readonly confirmedNearDuplicates: ReadonlyArray<{ readonly id: string; readonly statement: string }>
  /** entities in the largest subtree (the entity included) the proposal's relations refer to; 0 when none */
  readonly largestSubtree: number
}

export interface ClassifyInput {
  readonly proposal: Pick<ProposalRequest, "kind" | "statement" | "source" | "keywords" | "relations" | "supersedes">
  readonly source: SourceFacts
  /** the instance's own mail domains (config approval.own_domains), lowercase */
  readonly ownDomains: ReadonlyArray<string>
  readonly scope: ScopeFacts
}

export interface Classification {
  readonly ruleset: Ruleset
  readonly class: ProposalClass
  /** why this class, in plain words */
  readonly classReason: string
  /** in MANDATORY_EXCEPTIONS order, each at most once */
  readonly exceptions: ReadonlyArray<MandatoryException>
  /** the rule the proposal would replace: only a person supersedes (invariant 2) */
  readonly supersedes: string | null
  /** classReason, then each exception's reason */
  readonly reasons: ReadonlyArray<string>
}

// ---------------------------------------------------------------------------------------------
// Words

/** A word (or phrase) that starts with one of `alt`: Unicode letters, unlike \b. */
const words = (alt: ReadonlyArray<string>, whole = false): RegExp =>
  new RegExp(`(?<![\\p{L}\\p{N}])(?:${alt.join("|")})${whole ? "(?![\\p{L}\\p{N}])" : ""}`, "iu")

/** Word starts; a lookahead ends the word where a prefix would reach too far ("fees?" is not "feedback"). */
const PAYMENT_WORDS = words([
  // de
  "zahlung", "zahlt", "zahlst", "zahlbar", "bezahl", "überweis", "ueberweis", "bankverbindung", "kontoverbindung",
  "bankdaten", "bankkonto", "kontonummer", "iban(?![\\p{L}])", "bic(?![\\p{L}])", "sepa(?![\\p{L}])", "lastschrift",
  "vorkasse", "vorauszahlung", "anzahlung", "skonto", "rechnung", "gutschrift", "erstattung", "rückerstattung", "mahnung",
  "rabatt", "preis", "gebühr", "kredit", "darlehen", "lohn(?!t)", "löhne", "gehälter", "gehalt(?![\\p{L}])",
  "gehaltsabrechnung", "kosten",
  // en
  "pay(?:s|ing|ment\\w*|able)?(?![\\p{L}])", "paid(?![\\p{L}])", "prepa(?:y|id|yment)", "invoice", "billing",
  "bank account", "bank details", "wire transfer", "swift(?![\\p{L}])", "direct debit", "refund", "reimburs",
  "credit note", "credit limit", "discount", "price", "pricing", "fees?(?![\\p{L}])", "commission", "deposit",
  "remittance", "dunning", "overdue", "salar(?:y|ies)", "wages?(?![\\p{L}])", "payroll", "net \\d{1,3} days",
  "netto \\d{1,3} tage"
])
/** An amount with a currency: 12,50 EUR, € 300, $14.99, 5.000 CHF. */
const AMOUNT = /(?:[€$£]\s?\d)|(?:\d[\d.,']*\s?(?:€|eur|euro|usd|\$|chf|gbp|£)(?![\p{L}]))/iu

const PERSONAL_WORDS = words([
  // de
  "personenbezogen", "personaldaten", "personalakte", "geburtsdatum", "geburtstag", "privatadresse", "privatanschrift",
  "wohnadresse", "wohnanschrift", "privatnummer", "handynummer", "privat(?:e[nrs]?)?(?![\\p{L}])", "gesundheitszustand",
  "gesundheitsdaten", "gesundheitlich", "krank(?:heit\\w*|meldung\\w*|geschrieben|schreibung)?(?![\\p{L}])",
  "arbeitsunfähig", "diagnose(?![\\p{L}])", "behinderung", "schwanger", "religion", "konfession", "gewerkschaft",
  "lohnabrechnung", "bewerbung", "bewerber", "abmahnung", "sozialversicherung", "steuer-id",
  "steueridentifikationsnummer", "personalausweis", "ausweisnummer", "reisepass", "führerschein", "leistungsbeurteilung",
  "arbeitszeugnis", "vorstrafe",
  // en
  "personal data", "personal details", "personal information", "date of birth", "birthday", "home address",
  "private address", "private phone", "mobile number", "health data", "health(?![\\p{L}])", "sick leave",
  "sick(?:ness)?(?![\\p{L}])", "illness", "medical (?:record|certificate|condition|history|data)", "diagnosis", "disabilit", "pregnan",
  "religio", "union member", "personnel file", "hr file", "job application", "applicant", "performance review",
  "appraisal", "disciplinary", "social security", "passport", "id card", "driver'?s licen[cs]e", "criminal record",
  "ethnic", "sexual orientation"
])
const EMAIL = /[\p{L}\p{N}._%+-]+@[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)+/u
const PHONE = /(?<![\p{L}\p{N}])\+\d{1,3}[\s/-]?\(?\d{1,5}\)?(?:[\s/-]?\d{2,}){2,}/u

const EXTERNAL_WORDS = words([
  // de
  "kunde", "kunden", "kundin", "kundinnen", "lieferant", "spediteur", "spedition", "partner", "behörde", "dienstleister",
  "händler", "großhändler", "zulieferer", "auftraggeber", "mandant",
  // en
  "customer", "client", "supplier", "vendor", "carrier", "partner", "authorit", "contractor", "distributor", "reseller"
])

export const CREDENTIAL_WORDS = words([
  "passwords?", "passwörter", "passwort", "kennw\\p{L}*", "zugangsdaten", "zugangscodes?", "anmeldedaten", "logindaten",
  "login-daten", "pins?", "pincodes?", "tans?", "api[- ]keys?", "api-schlüssel", "apikeys?", "tokens?", "credentials?",
  "passcodes?", "private keys?", "privater? schlüssel", "secret keys?", "access keys?", "zugangsschlüssel", "2fa-codes?",
  "mfa codes?", "einmalpasswort", "one-time passwords?"
], true)
/** German compounds that begin with a credential word are still about credentials ("Passwortrichtlinie"). */
export const CREDENTIAL_PREFIX = words(["passwort", "password", "kennwort", "zugangsdaten", "credential"])

export const HEDGES = words([
  // de
  "vielleicht", "eventuell", "evtl\\.?", "möglicherweise", "vermutlich", "wahrscheinlich", "wohl", "angeblich",
  "anscheinend", "scheinbar", "womöglich", "mutmaßlich", "ich glaube", "glaube ich", "ich denke", "denke ich",
  "ich meine", "unklar", "unsicher", "ungewiss", "unter umständen", "u\\. ?u\\.", "keine ahnung", "weiß nicht",
  "weiss nicht", "noch offen", "noch zu klären", "nicht sicher", "könnte", "müsste", "dürfte", "irgendwie", "tendenziell",
  // en
  "maybe", "perhaps", "probably", "possibly", "presumably", "supposedly", "apparently", "i think", "i believe", "i guess",
  "i suppose", "not sure", "unsure", "unclear", "uncertain", "might", "could be", "may be", "tbd", "tbc",
  "to be confirmed", "to be clarified", "to be decided", "not certain"
], true)

const NEGATIONS = words([
  "nicht", "kein", "keine", "keinen", "keinem", "keiner", "keines", "nie", "niemals", "nimmer", "ohne", "verboten",
  "untersagt", "weder", "nirgends", "nichts", "not", "no(?!\\.\\s?\\d)", "never", "without", "forbidden", "prohibited", "none", "nor",
  "neither", "nothing", "cannot", "can't", "cant", "don't", "dont", "doesn't", "doesnt", "didn't", "won't", "mustn't",
  "shouldn't", "isn't", "aren't", "wasn't", "weren't", "may not", "must not"
], true)

/** The first match of `re` in any of the texts, as written there, up to the end of its word ("Invoice" → "Invoices"). */
export const firstMatch = (re: RegExp, texts: ReadonlyArray<string>): string | null => {
  for (const t of texts) {
    const m = re.exec(t)
    if (m !== null) {
      const rest = /^[\p{L}\p{N}]*/u.exec(t.slice(m.index + m[0].length))?.[0] ?? ""
      return (m[0] + rest).slice(0, 60)
    }
  }
  return null
}

/** Negations counted: an odd number negates ("never ship without approval" is positive). */
export const negated = (statement: string): boolean => {
  const all = new RegExp(NEGATIONS.source, "giu")
  return ((statement.match(all) ?? []).length) % 2 === 1
}

// ---------------------------------------------------------------------------------------------
// Mail origin

/** The address of a sender: `Maria <maria@acme.example>` or `maria@acme.example`; null when none. */
export const senderAddress = (sender: string): string | null => {
  const angle = /<([^<>\s]+@[^<>\s]+)>/.exec(sender)
  const address = angle?.[1] ?? /[^\s<>"',;]+@[^\s<>"',;]+/.exec(sender)?.[0] ?? null
  return address === null ? null : address.toLowerCase()
}

const domainOf = (address: string): string => (address.split("@").pop() ?? "").replace(/\.$/, "")

/** A domain is own when it equals one of the own domains or is a subdomain of one. */
export const isOwnDomain = (domain: string, ownDomains: ReadonlyArray<string>): boolean =>
  ownDomains.some((own) => domain === own || domain.endsWith(`.${own}`))

/**
 * Authentication-Results (RFC 8601) that pass: every dmarc result is pass; without dmarc, a dkim
 * and an spf pass and no spf fail. Any temperror/permerror of these methods fails. Returns the
 * failing results for the reason, or [] when the results pass.
 */
export const authenticationFailures = (results: string): Array<string> => {
  const found: Array<{ method: string; result: string }> = []
  for (const m of results.toLowerCase().matchAll(/(?<![a-z0-9.-])(dmarc|dkim|spf|arc)\s*=\s*([a-z]+)/g)) {
    found.push({ method: m[1] ?? "", result: m[2] ?? "" })
  }
  const of = (method: string) => found.filter((f) => f.method === method)
  const bad = found.filter((f) => f.method !== "arc" && (f.result === "temperror" || f.result === "permerror")).map((f) => `${f.method}=${f.result}`)
  const dmarc = of("dmarc")
  if (dmarc.length > 0) {
    const failing = dmarc.filter((f) => f.result !== "pass").map((f) => `dmarc=${f.result}`)
    return [...new Set([...failing, ...bad])]
  }
  const spfFail = of("spf").filter((f) => f.result === "fail" || f.result === "softfail").map((f) => `spf=${f.result}`)
  if (found.length === 0) return ["no dmarc, dkim or spf result"]
  const missing: Array<string> = []
  if (!of("dkim").some((f) => f.result === "pass")) missing.push(of("dkim").length === 0 ? "no dkim result" : `dkim=${of("dkim")[0]?.result ?? ""}`)
  if (!of("spf").some((f) => f.result === "pass")) missing.push(of("spf").length === 0 ? "no spf result" : `spf=${of("spf")[0]?.result ?? ""}`)
  return [...new Set([...spfFail, ...missing, ...bad])]
}

const externalMail = (source: SourceFacts, ownDomains: ReadonlyArray<string>): { external: boolean; reason: string } | null => {
  if (source.kind !== "mail") return null
  const sender = source.sender === null ? null : senderAddress(source.sender)
  const from = source.auth === null ? null : senderAddress(source.auth.from)
  const address = from ?? sender
  if (address === null) return { external: true, reason: "The mail's sender address is unknown, so it cannot be told apart from a mail from outside." }
  if (sender !== null && from !== null && sender !== from) {
    return { external: true, reason: `The mail's sender (${sender}) differs from its authenticated From address (${from}).` }
  }
  const domain = domainOf(address)
  if (ownDomains.length === 0) {
    return { external: true, reason: `No own mail domains are configured (approval.own_domains), so the mail from ${domain} counts as coming from outside.` }
  }
  if (!isOwnDomain(domain, ownDomains)) {
    return { external: true, reason: `The mail comes from outside the company: ${domain} is not one of ${ownDomains.join(", ")}.` }
  }
  // no Authentication-Results stored: nothing passed, the sender is only what the feeder says (fail-closed)
  if (source.auth === null) {
    return { external: true, reason: `The mail from ${domain} carries no authentication results (source.auth), so its sender is not proven.` }
  }
  const failures = authenticationFailures(source.auth.authentication_results)
  if (failures.length > 0) return { external: true, reason: `The mail from ${domain} did not pass its authentication checks (${failures.join(", ")}), so its sender is not proven.` }
  return { external: false, reason: "" }
}

// ---------------------------------------------------------------------------------------------
// Classify

export const quoted = (word: string): string => `“${word.trim()}”`

const classOf = (texts: ReadonlyArray<string>, input: ClassifyInput, mail: ReturnType<typeof externalMail>): { class: ProposalClass; reason: string } => {
  const money = firstMatch(PAYMENT_WORDS, texts) ?? firstMatch(AMOUNT, texts)
  if (money !== null) {
    return { class: "payment", reason: `Class payment: it is about money (${quoted(money)}): payments, invoices, bank details, prices, discounts or amounts.` }
  }
  const personal = firstMatch(PERSONAL_WORDS, texts)
  if (personal !== null) return { class: "personal", reason: `Class personal: it holds or concerns personal data (${quoted(personal)}).` }
  if (firstMatch(EMAIL, texts) !== null || firstMatch(PHONE, texts) !== null) {
    return { class: "personal", reason: "Class personal: it holds a person's contact data (an e-mail address or phone number)." }
  }
  const relation = input.proposal.relations.find((r) => r.kind === "customer" || r.kind === "supplier")
  if (relation !== undefined) {
    return { class: "external", reason: `Class external: it concerns an outside party (${relation.kind} ${quoted(relation.name)}).` }
  }
  const outsider = firstMatch(EXTERNAL_WORDS, texts)
  if (outsider !== null) return { class: "external", reason: `Class external: it concerns an outside party (${quoted(outsider)}).` }
  if (mail?.external === true) return { class: "external", reason: "Class external: its evidence is a mail from outside the company." }
  return { class: "general", reason: "Class general: an internal rule with no money, personal data or outside party in it." }
}

/** Class and mandatory exceptions of a proposal, each with its reason. Pure and deterministic. */
export const classify = (input: ClassifyInput): Classification => {
  const { proposal, scope } = input
  const statement = proposal.statement
  const quote = proposal.source.quote
  const texts = [statement, quote, ...proposal.keywords]
  const mail = externalMail(input.source, input.ownDomains)
  const cls = classOf(texts, input, mail)
  const found = new Map<MandatoryExceptionName, string>()

  if (cls.class === "payment") {
    found.set("payment", "Payment: rules about money always wait for a person, in every mode.")
  }

  const secretKinds = [...new Set(scanSecrets(texts.map((text, i) => ({ field: i === 0 ? "statement" : i === 1 ? "quote" : "keywords", text }))).map((h) => h.kind))]
  const credential = firstMatch(CREDENTIAL_WORDS, texts) ?? firstMatch(CREDENTIAL_PREFIX, texts)
  if (secretKinds.length > 0) {
    found.set("secret", `Secret: it holds what looks like a secret (${secretKinds.join(", ")}); a secret is never stored and a person decides.`)
  } else if (credential !== null) {
    found.set("secret", `Secret: it is about credentials (${quoted(credential)}); a person checks that no secret is in it.`)
  }

  const contradicting = [...new Set(scope.contradictedBy)].sort()
  const opposite = scope.confirmedNearDuplicates
    .filter((d) => negated(d.statement) !== negated(statement))
    .map((d) => d.id)
  const oppositeIds = [...new Set(opposite)].sort()
  if (contradicting.length > 0 || oppositeIds.length > 0) {
    const parts: Array<string> = []
    if (contradicting.length > 0) parts.push(`confirmed ${contradicting.length === 1 ? "rule" : "rules"} ${contradicting.join(", ")} ${contradicting.length === 1 ? "is" : "are"} linked to it as contradicting`)
    if (oppositeIds.length > 0) parts.push(`confirmed ${oppositeIds.length === 1 ? "rule" : "rules"} ${oppositeIds.join(", ")} ${oppositeIds.length === 1 ? "says" : "say"} nearly the same with the opposite meaning (one of the two is negated)`)
    found.set("contradiction", `Contradiction: ${parts.join("; ")}.`)
  }

  if (mail?.external === true) found.set("external-sensitive", `External mail: ${mail.reason}`)

  const signals = [
    ...injectionSignals(statement).map((s) => `${s} in the statement`),
    ...injectionSignals(quote).map((s) => `${s} in the quote`)
  ]
  if (signals.length > 0) {
    found.set("injection", `Injection: the text reads like instructions to an AI (${signals.join(", ")}).`)
  }

  if (proposal.source.kind === "manual") {
    found.set("unchecked-quote", "Unchecked quote: the evidence is the proposer's own words (manual source), not checked against a stored mail or meeting.")
  }

  const hedge = firstMatch(HEDGES, [statement, quote])
  const question = statement.includes("?") || quote.includes("?")
  if (hedge !== null || question) {
    const what = [hedge === null ? null : quoted(hedge), question ? "a question mark" : null].filter((x) => x !== null).join(" and ")
    found.set("doubt", `Doubt: it sounds uncertain (${what}); a person decides whether it is a rule.`)
  }

  if (scope.largestSubtree >= LARGE_SUBTREE) {
    found.set("large-subtree", `Large subtree: it concerns a part of the structure with ${scope.largestSubtree} entities (${LARGE_SUBTREE} or more wait for a person).`)
  }

  const exceptions = MANDATORY_EXCEPTIONS.filter((e) => found.has(e)).map((e) => ({ exception: e, reason: found.get(e) ?? "" }))
  return {
    ruleset: RULESET,
    class: cls.class,
    classReason: cls.reason,
    exceptions,
    supersedes: proposal.supersedes,
    reasons: [cls.reason, ...exceptions.map((e) => e.reason)]
  }
}
