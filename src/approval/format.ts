/**
 * Small pieces the pages share: statuses as badges, ages in calendar days of config.zone, local
 * times, sizes. Pure functions; every one returns Html built by the escaper.
 */
import { formatTimestamp } from "../domain/provenance.js"
import { dayIn, localDateTime } from "../contracts/time.js"
import { type Html, html, join } from "./html.js"

/** Calendar days in `zone` from `instant` to `nowMs` (0 = today). */
export const ageDays = (instant: string, nowMs: number, zone: string): number => {
  const then = Date.parse(`${dayIn(zone, Date.parse(instant))}T00:00:00Z`)
  const now = Date.parse(`${dayIn(zone, nowMs)}T00:00:00Z`)
  return Math.max(0, Math.round((now - then) / 86_400_000))
}

export const ageText = (days: number): string => (days === 0 ? "today" : days === 1 ? "1 day ago" : `${days} days ago`)

export interface Clockwork {
  readonly nowMs: number
  readonly zone: string
}

/** A <time> with the local date and time; the age in days when `age` is set. */
export const when = (instant: string | null, c: Clockwork, age = false): Html => {
  if (instant === null) return html`<span class="muted">—</span>`
  const ms = Date.parse(instant)
  if (Number.isNaN(ms)) return html`<span>${instant}</span>`
  const local = localDateTime(c.zone, ms)
  return age
    ? html`<time datetime="${instant}" title="${local} (${c.zone})">${ageText(ageDays(instant, c.nowMs, c.zone))}</time>`
    : html`<time datetime="${instant}">${local}</time>`
}

export const STATUS_LABEL: Readonly<Record<string, string>> = {
  proposed: "proposed", confirmed: "confirmed", superseded: "superseded", rejected: "rejected",
  active: "active", unconfirmed: "unconfirmed", archived: "archived"
}

export const badge = (status: string): Html => {
  const known = STATUS_LABEL[status]
  return known === undefined ? html`<span class="badge">${status}</span>` : html`<span class="badge ${known}">${known}</span>`
}

export const timestamp = (s: number | null): string | null => (s === null ? null : formatTimestamp(s))

export const bytes = (n: number | null): string => {
  if (n === null) return "size unknown"
  if (n < 1024) return `${n} B`
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`
  return `${(n / 1024 / 1024).toFixed(1)} MiB`
}

/** The start of a text, at most `chars` code points, ending in … when shortened. */
export const shorten = (text: string, chars: number): string => {
  const cps = [...text]
  return cps.length <= chars ? text : `${cps.slice(0, chars - 1).join("")}…`
}

const parseStrings = (json: string | null): Array<string> => {
  if (json === null) return []
  try {
    const v = JSON.parse(json) as unknown
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []
  } catch {
    return []
  }
}

/** Why it waits for a person or why it was adopted: the exceptions as badges and the reasons in plain words. */
export const reasonsList = (exceptionsJson: string | null, reasonsJson: string | null): Html | string => {
  const exceptions = parseStrings(exceptionsJson)
  const reasons = parseStrings(reasonsJson)
  if (exceptions.length === 0 && reasons.length === 0) return ""
  return html`<div class="reasons">${exceptions.length === 0 ? "" : html`<p class="small">${exceptions.map((e) => html`<span class="badge exception">${e}</span> `)}</p>`}<ul class="small">${reasons.map((r) => html`<li>${r}</li>`)}</ul></div>`
}


/**
 * The details line: ids, versions, grant ids, channels and other technical words a business
 * person does not need to decide, kept small below the main view.
 */
export const detailsLine = (parts: ReadonlyArray<string | Html>): Html | string =>
  parts.length === 0 ? "" : html`<p class="details">Details: ${join(parts, " · ")}</p>`

/** Who a grant is in plain words: its label or e-mail (the grant id belongs on the details line). */
export const grantName = (names: ReadonlyMap<string, string>, grantId: string): string => {
  if (grantId.startsWith("policy@")) return "the approval policy"
  return names.get(grantId) ?? (grantId.startsWith("service:") ? "a feeder" : grantId.startsWith("person:") ? "a person" : grantId)
}

/** A server-written reason in plain words ("proposed via mcp" → "Proposed by an agent"); anything else as written. */
export const reasonText = (reason: string): string => {
  const m = /^(proposed|created|moved|updated|renamed|changed) via (mcp|api|approval|proactive|task)$/.exec(reason)
  if (m === null) return reason
  const verb = `${(m[1] ?? "").charAt(0).toUpperCase()}${(m[1] ?? "").slice(1)}`
  return m[2] === "mcp" ? `${verb} by an agent` : m[2] === "api" ? `${verb} by a feeder` : verb
}

/** How an attachment's text came about, in plain words. */
export const TEXT_ORIGIN: Readonly<Record<string, string>> = { ocr: "read from the scan (OCR)", description: "a description of the file" }

/** A media type as people name files. */
export const fileKind = (mediaType: string): string => {
  const known: Readonly<Record<string, string>> = {
    "application/pdf": "PDF", "image/png": "image", "image/jpeg": "image", "text/plain": "text",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "Word document",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "Excel sheet", "message/rfc822": "mail"
  }
  return known[mediaType] ?? mediaType
}

/** An instant as the zone's local date and time (the one format of the pages), or the text when it is none. */
export const localTime = (instant: string, c: Clockwork): string => {
  const ms = Date.parse(instant)
  return Number.isNaN(ms) ? instant : localDateTime(c.zone, ms)
}
