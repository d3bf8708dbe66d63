/**
 * What happened to the person's last post, shown at the top of the page they land on: a saved
 * decision (after the redirect, from the query `done` and `v`), or a refusal with its code, the
 * current version and what the person sent (nothing of it was saved).
 */
import { type Html, html } from "./html.js"

export const DONE_KINDS = ["confirm", "reject", "revoke", "review", "structure-confirm", "structure-reject", "structure-revert", "archive"] as const
export type DoneKind = typeof DONE_KINDS[number]

export type Outcome =
  | { readonly kind: "done"; readonly done: DoneKind; readonly version: number | null; readonly target: string | null }
  | {
    readonly kind: "refused"
    readonly status: number
    readonly code: string
    readonly message: string
    readonly issues: ReadonlyArray<{ readonly path: string; readonly message: string }>
    readonly remedy: string | null
    readonly current: string | null
    /** the fields the person posted (the csrf token left out) */
    readonly sent: Readonly<Record<string, string>>
  }

const DONE_TEXT: Record<DoneKind, string> = {
  confirm: "Confirmed.",
  reject: "Rejected.",
  revoke: "Revoked.",
  review: "Marked as reviewed.",
  "structure-confirm": "Confirmed.",
  "structure-reject": "Link rejected.",
  "structure-revert": "Reverted.",
  archive: "Archived."
}

/** The outcome named by the query after a redirect; anything else is ignored. */
export const outcomeFromQuery = (query: { readonly done?: string | undefined; readonly v?: string | undefined; readonly target?: string | undefined }): Outcome | null => {
  const done = query.done
  if (done === undefined || !(DONE_KINDS as ReadonlyArray<string>).includes(done)) return null
  const v = query.v === undefined ? null : Number(query.v)
  const target = query.target !== undefined && /^(entity|link)\/[a-z][a-z0-9-]{1,39}-[el]\d{4,}(@[1-9]\d*)?$/.test(query.target) ? query.target : null
  return { kind: "done", done: done as DoneKind, version: v !== null && Number.isInteger(v) && v > 0 ? v : null, target }
}

export const doneNotice = (o: Extract<Outcome, { kind: "done" }>, extra: Html | string = ""): Html => html`
<div class="notice ok" role="status" id="outcome">
  <h2>${DONE_TEXT[o.done]}</h2>
  <p>${o.version !== null ? `Saved. Version ${o.version} is now current.` : o.target !== null ? `Saved: ${o.target}.` : "Saved; nothing else changed."}</p>
  ${extra}
</div>`

const FIELD_LABEL: Readonly<Record<string, string>> = {
  decision: "Decision", verdict: "Verdict", target: "Target", version: "Version you saw", reason: "Reason", statement: "Statement",
  keywords: "Keywords", relations: "Relations", valid_from: "Valid from", valid_until: "Valid until", kind: "Kind",
  said_at: "Said at", speaker: "Speaker", supersedes: "Supersedes"
}

/** The refusal: code, message, issues, and what the person sent (not saved). */
export const refusedNotice = (o: Extract<Outcome, { kind: "refused" }>, changed: Html | string = ""): Html => html`
<div class="notice ${o.status === 409 ? "warn" : "error"}" role="alert" id="outcome">
  <h2>Not saved: ${o.code}</h2>
  <p>${o.message}</p>
  ${o.issues.length === 0 ? "" : html`<ul>${o.issues.map((i) => html`<li><b>${i.path}</b>: ${i.message}</li>`)}</ul>`}
  ${o.remedy === null ? "" : html`<p>${o.remedy}</p>`}
  ${o.current === null ? "" : html`<p>Current version: <b>${o.current}</b>.</p>`}
  ${changed}
  ${Object.keys(o.sent).length === 0 ? "" : html`<details><summary>What you sent</summary><dl class="facts">${
    Object.entries(o.sent).map(([k, v]) => html`<dt>${FIELD_LABEL[k] ?? k}</dt><dd>${v === "" ? "—" : v}</dd>`)
  }</dl></details>`}
</div>`
