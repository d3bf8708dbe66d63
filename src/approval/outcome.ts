/**
 * What happened to the person's last post, shown at the top of the page they land on: a saved
 * decision (after the redirect, from the query `done` and `v`), or a refusal with its code, the
 * current version and what the person sent (nothing of it was saved).
 */
import { plural } from "../contracts/words.js"
import { type Html, html } from "./html.js"
import { filledRows, issueLabel } from "./relation-rows.js"

export const DONE_KINDS = ["confirm", "reject", "revoke", "review", "structure-confirm", "structure-reject", "structure-revert", "archive",
  "entity-created", "link-created", "link-closed", "unarchive"] as const
export type DoneKind = typeof DONE_KINDS[number]

export type Outcome =
  | {
    readonly kind: "done"
    readonly done: DoneKind
    readonly version: number | null
    readonly target: string | null
    /** a bulk post: how many items it decided or reviewed */
    readonly count?: number
  }
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
  archive: "Archived.",
  "entity-created": "Entity created.",
  "link-created": "Link created.",
  "link-closed": "Link closed.",
  unarchive: "Unarchived."
}

/** A refused bulk post: the items the person selected (selected again) and the refused one (marked with why). */
export interface BulkState {
  readonly checked: ReadonlySet<string>
  readonly refused: string | null
  readonly note: string | null
  readonly reason: string
}

/** The outcome named by the query after a redirect; anything else is ignored. */
export const outcomeFromQuery = (query: {
  readonly done?: string | undefined
  readonly v?: string | undefined
  readonly target?: string | undefined
  /** a stale decision: the version the person saw, and the decision they tried */
  readonly stale?: string | undefined
  readonly tried?: string | undefined
  /** a bulk post: how many items it decided or reviewed */
  readonly n?: string | undefined
}): Outcome | null => {
  if (query.stale !== undefined && /^[1-9]\d{0,8}$/.test(query.stale)) {
    const tried = query.tried !== undefined && (DONE_KINDS as ReadonlyArray<string>).includes(query.tried) ? query.tried : null
    return {
      kind: "refused", status: 409, code: "version-outdated",
      message: `You decided on version ${query.stale}; somebody decided before you, so your ${tried ?? "decision"} was not saved.`,
      issues: [], remedy: "Look at what changed and decide again on the current version below.", current: null,
      sent: { ...(tried === null ? {} : { decision: tried }), version: query.stale }
    }
  }
  const done = query.done
  if (done === undefined || !(DONE_KINDS as ReadonlyArray<string>).includes(done)) return null
  const v = query.v === undefined ? null : Number(query.v)
  const target = query.target !== undefined && /^(entity|link)\/[a-z][a-z0-9-]{1,39}-[el]\d{4,}(@[1-9]\d*)?$/.test(query.target) ? query.target : null
  const n = query.n !== undefined && /^[1-9]\d{0,3}$/.test(query.n) ? Number(query.n) : null
  return {
    kind: "done", done: done as DoneKind, version: v !== null && Number.isInteger(v) && v > 0 ? v : null, target, ...(n === null ? {} : { count: n })
  }
}

/** What the saved decision means, in a business person's words (versions and refs go to the details line). */
const DONE_MEANING: Record<DoneKind, string> = {
  confirm: "Saved. The rule is in force and agents find it.",
  reject: "Saved. It no longer appears anywhere outside these pages.",
  revoke: "Saved. The rule no longer applies from the day you gave.",
  review: "Saved. The rule counts as checked today.",
  "structure-confirm": "Saved.",
  "structure-reject": "Saved. The link is gone.",
  "structure-revert": "Saved. The last confirmed state is back.",
  archive: "Saved. It is archived for good.",
  "entity-created": "Saved. It is in the tree, confirmed, and agents find it.",
  "link-created": "Saved. The link holds from now on, confirmed.",
  "link-closed": "Saved. The link no longer holds from today; its history stays.",
  unarchive: "Saved. It is back in the tree and in search."
}

/** The heading of a bulk post's outcome: what was done to how many. */
const BULK_TEXT: Readonly<Record<DoneKind, readonly [verb: string, one: string, many: string]>> = {
  confirm: ["Confirmed", "proposal", "proposals"],
  reject: ["Rejected", "proposal", "proposals"],
  revoke: ["Revoked", "rule", "rules"],
  review: ["Marked as reviewed:", "rule", "rules"],
  "structure-confirm": ["Confirmed", "structure change", "structure changes"],
  "structure-reject": ["Rejected or reverted", "structure change", "structure changes"],
  "structure-revert": ["Rejected or reverted", "structure change", "structure changes"],
  archive: ["Archived", "entity", "entities"],
  "entity-created": ["Created", "entity", "entities"],
  "link-created": ["Created", "link", "links"],
  "link-closed": ["Closed", "link", "links"],
  unarchive: ["Unarchived", "entity", "entities"]
}

export const doneNotice = (o: Extract<Outcome, { kind: "done" }>, extra: Html | string = ""): Html => {
  if (o.count !== undefined) {
    const [verb, one, many] = BULK_TEXT[o.done]
    return html`
<div class="notice ok" role="status" id="outcome">
  <h2>${verb} ${plural(o.count, one, many)}.</h2>
  <p>Saved, each as its own decision with your name.</p>
  ${extra}
</div>`
  }
  // a reject or revoke leaves no version anyone works with: the version is not worth a word there
  const technical = [
    ...(o.version !== null && o.done !== "reject" && o.done !== "revoke" ? [`version ${o.version}`] : []),
    ...(o.target !== null ? [o.target] : [])
  ]
  return html`
<div class="notice ok" role="status" id="outcome">
  <h2>${DONE_TEXT[o.done]}</h2>
  <p>${DONE_MEANING[o.done]}</p>
  ${technical.length === 0 ? "" : html`<p class="details">Details: ${technical.join(" · ")}</p>`}
  ${extra}
</div>`
}

const FIELD_LABEL: Readonly<Record<string, string>> = {
  decision: "Decision", verdict: "Verdict", target: "Target", version: "Version you saw", reason: "Reason", statement: "Statement",
  keywords: "Keywords", relations: "Relations", valid_from: "Valid from", valid_until: "Valid until", kind: "Kind",
  said_at: "Said at", said_at_local: "Said at", speaker: "Speaker", supersedes: "Supersedes",
  name: "Name", type: "Type", parent_id: "Parent", aliases: "Aliases", evidence: "Evidence", force: "Different from similar ones",
  from_ref: "From", to_ref: "To", link: "Link", entity: "Entity", correction: "Correction", scope: "Scope"
}

/** What the person sent, labelled; the relation rows as one line "kind: name; …". */
const sentLines = (sent: Readonly<Record<string, string>>): Array<readonly [string, string]> => {
  const lines: Array<readonly [string, string]> = []
  for (const [k, v] of Object.entries(sent)) {
    if (/^relation_(kind|name|ref)_\d+$/.test(k)) continue
    if (k === "relations_rows") {
      lines.push(["Relations", filledRows(sent).map((r) => `${r.kind === "" ? "(no kind)" : r.kind}: ${r.name === "" ? "(no name)" : r.name}`).join("; ")])
      continue
    }
    lines.push([FIELD_LABEL[k] ?? k, v])
  }
  return lines
}

/** Why it was not saved, in a business person's words (the code goes to the details line). */
const REFUSED_TEXT: Readonly<Record<string, string>> = {
  "validation-failed": "a field needs correcting",
  "version-outdated": "somebody decided first",
  "already-decided": "it was already decided",
  "reason-missing": "a reason is needed",
  "has-children": "archive what lies below it first",
  "duplicate-candidate": "a similar entity exists",
  "parent-archived": "its parent is archived",
  "depth-limit": "the tree would get too deep",
  "scope-mismatch": "it belongs to another scope",
  "not-found": "it no longer exists",
  "csrf-failed": "the form was not sent from this page",
  "rate-limited": "too many decisions at once; wait a moment",
  "reference-unknown": "the rule it should supersede is not a confirmed rule of this scope",
  "source-immutable": "the quote and its source never change"
}

/** A schema's message in plain words where it is a common one; else as it is. */
export const plainIssue = (message: string): string => {
  if (/at least 1 character\(s\) long, actual ""$/.test(message) || /actual ""$/.test(message)) return "is empty: fill it in"
  const min = /at least (\d+) character\(s\) long/.exec(message)
  if (min !== null) return `needs at least ${min[1]} characters`
  const max = /at most (\d+) character\(s\) long/.exec(message)
  if (max !== null) return `may have at most ${max[1]} characters`
  if (/^Expected "(customer|product|supplier)"( \|.*)?, actual/.test(message)) return "pick customer, product or supplier"
  return message
}

/**
 * The issues worth showing: a decision is one of four shapes, so a bad confirm also fails the
 * other shapes ("Expected undefined", "unknown key") — noise once a real issue names the field.
 */
const relevantIssues = (issues: ReadonlyArray<{ readonly path: string; readonly message: string }>) => {
  const noise = (m: string) => m.startsWith("Expected undefined") || m.startsWith("unknown key")
  const real = issues.filter((i) => !noise(i.message))
  return real.length === 0 ? issues : real
}

/** The refusal: what was wrong in plain words, the fields, and what the person sent (not saved); the code and raw message on the details line. */
export const refusedNotice = (o: Extract<Outcome, { kind: "refused" }>, changed: Html | string = ""): Html => {
  const issues = relevantIssues(o.issues)
  return html`
<div class="notice ${o.status === 409 ? "warn" : "error"}" role="alert" id="outcome">
  <h2>Not saved: ${REFUSED_TEXT[o.code] ?? o.code}</h2>
  ${issues.length === 0 ? html`<p>${o.message}</p>` : html`<ul>${
    [...new Map(issues.map((i) => [`${i.path}\u0000${plainIssue(i.message)}`, i] as const)).values()]
      .map((i) => html`<li><b>${issueLabel(i.path, o.sent)}</b>: ${plainIssue(i.message)}</li>`)
  }</ul>`}
  ${o.remedy === null ? "" : html`<p>${o.remedy}</p>`}
  ${changed}
  ${Object.keys(o.sent).length === 0 ? "" : html`<details><summary>What you sent</summary><dl class="facts">${
    sentLines(o.sent).map(([k, v]) => html`<dt>${k}</dt><dd>${v === "" ? "—" : v}</dd>`)
  }</dl></details>`}
  <p class="details">Details: ${o.code} (${o.status})${issues.length === 0 ? "" : ` · ${o.message}`}${o.current === null ? "" : ` · current ${o.current}`}</p>
</div>`
}
