/**
 * Fixtures of the approval-mode tests (gaps.md §10): a mail from inside the company with plain
 * business lines and the lines that raise each mandatory exception, proposals quoting them, the
 * approval block of a mode, and a logical dump of every table of a scope file (to prove that a
 * refusal changed nothing but the rows it is allowed to write).
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import type { ProposalRequest } from "../../src/domain/proposal-schemas.js"
import type { SourceRequest } from "../../src/domain/source-schemas.js"

export const OWN_DOMAIN = "acme.example"
export const PASSING_AUTH = "mx.acme.example; spf=pass smtp.mailfrom=acme.example; dkim=pass header.d=acme.example; dmarc=pass header.from=acme.example"

/** Internal rules: class general, no mandatory exception (each quoted as its own statement). */
export const PLAIN = [
  "Muster gehen immer zuerst an die Qualitätssicherung.",
  "Paletten werden im Hof links gelagert.",
  "Sonderfarben werden nur in Halle 3 lackiert.",
  "Protokolle liegen spätestens am Folgetag im Teamordner.",
  "Gabelstapler werden nachts in Halle 2 geladen.",
  "Die Inventur findet jedes Jahr am 30. Dezember statt.",
  "Das Lager schließt freitags um 14 Uhr."
] as const

/** One line per mandatory exception that a mail line can raise (the others come from the request). */
export const EXCEPTION_LINES = {
  payment: "Rechnungen werden im Lager in der blauen Mappe gesammelt.",
  secret: "Die Passwortrichtlinie gilt ab sofort auch im Lager.",
  contradiction: "Muster gehen nie zuerst an die Qualitätssicherung.",
  doubt: "Vielleicht werden Kartons künftig im Keller gestapelt.",
  external: "Lieferanten melden sich immer zuerst am Tor 4 an."
} as const

export const INTERNAL_MAIL_ID = "mail:<lager-2026@acme.example>"
export const OUTSIDE_MAIL_ID = "mail:<offer-7@partner.example>"

export const internalMail = (): SourceRequest => ({
  scope: "sales",
  source: {
    kind: "mail", id: INTERNAL_MAIL_ID, title: "Regeln im Lager", occurred_at: "2026-01-14T09:00:00Z",
    sender: "Maria Schmidt <maria@acme.example>", thread: null, link: "https://mail.acme.example/m/42",
    auth: { from: "maria@acme.example", authentication_results: PASSING_AUTH }
  },
  text: ["Hallo zusammen,", "", ...PLAIN, ...Object.values(EXCEPTION_LINES), "", "Viele Grüße, Maria"].join("\n"),
  attachments: []
})

export const outsideMail = (): SourceRequest => ({
  scope: "sales",
  source: {
    kind: "mail", id: OUTSIDE_MAIL_ID, title: "Ihre Anfrage", occurred_at: "2026-01-14T10:00:00Z",
    sender: "Jan <jan@partner.example>", thread: null, link: null,
    auth: { from: "jan@partner.example", authentication_results: "mx.acme.example; spf=pass; dkim=pass; dmarc=pass header.from=partner.example" }
  },
  text: "Guten Tag,\nKartons werden ab Montag nur noch gefaltet angeliefert.\nGruß Jan",
  attachments: []
})

/** A proposal quoting `line` of the internal mail, the line itself as the statement. */
export const quoting = (line: string, over: Partial<ProposalRequest> = {}): ProposalRequest => ({
  scope: "sales",
  kind: "rule",
  statement: line,
  source: { kind: "mail", id: INTERNAL_MAIL_ID, quote: line, link: null },
  said_at: "2026-01-14T09:00:00Z",
  speaker: null,
  relations: [],
  keywords: [],
  valid_from: "2026-01-14",
  supersedes: null,
  ...over
})

export type Mode = "autonomous" | "classified" | "manual"

/** The approval block of one mode for every scope. */
export const approvalOf = (mode: Mode, dailyLimit = 50) => ({ approval: { default_mode: mode, daily_limit: dailyLimit, own_domains: [OWN_DOMAIN] } })

export type Rows = Readonly<Record<string, ReadonlyArray<string>>>

/** Every row of every table (ordinary, virtual and shadow tables), each as JSON, sorted. */
export const allRows = (sql: SqlClient) =>
  Effect.gen(function*() {
    const tables = yield* sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`
    const out: Record<string, Array<string>> = {}
    for (const { name } of tables) {
      const rows = yield* sql.unsafe<Record<string, unknown>>(`SELECT * FROM "${name}"`)
      out[name] = rows.map((r) => JSON.stringify(r, (_k, v: unknown) => (v instanceof Uint8Array ? Buffer.from(v).toString("hex") : v))).sort()
    }
    return out as Rows
  })

/** The rows `after` holds that `before` does not, per table (rows are never removed from these files). */
export const addedRows = (before: Rows, after: Rows): Record<string, Array<string>> => {
  const out: Record<string, Array<string>> = {}
  for (const [table, rows] of Object.entries(after)) {
    const had = new Set(before[table] ?? [])
    const added = rows.filter((r) => !had.has(r))
    if (added.length > 0 || (before[table]?.length ?? 0) !== rows.length - added.length) out[table] = added
  }
  return out
}
