/**
 * The one-line summary of a bundle (architecture.md §8, graph.md §11), built in code, English,
 * dates in config.zone:
 *
 *   <Label> from <YYYY-MM-DD>: <statement>[ — with <parts>]; <review>
 *
 * Label: "Rule" / "Note"; a proposal reads "Unconfirmed rule" / "Unconfirmed note", a
 * superseded head "Superseded rule" / "Superseded note", a confirmed head the approval policy
 * adopted without a person "Auto-adopted rule" / "Auto-adopted note" (the prefix is capitalized, the kind
 * word after it lower case, as in an English sentence).
 * Parts in the fixed group order; " (of which <p> proposed)" closes the parts when shown
 * entries hang on proposed links. Review: "last reviewed <d> day(s) ago" (+ ", still valid?"
 * when recheck), for proposals "proposed <d> day(s) ago, not confirmed".
 *
 * A pure function of the bundle parts: the head, its groups and the number of unread
 * attachments (text_origin none), which the shown entries alone cannot tell past 5.
 */
import type { Group, GroupKind, Head } from "../domain/search-schemas.js"
import { dayIn } from "../contracts/time.js"
import { plural } from "../contracts/words.js"

/** The head fields the line reads. */
export type LineHead = Pick<Head, "kind" | "status" | "date" | "title" | "age_days" | "recheck"> & { readonly adoption?: Head["adoption"] }

export interface LineFacts {
  /** IANA zone of config.zone: the date of the line is the said_at day there. */
  readonly zone: string
  /** attachments of the source with text_origin none (all of them, not only the shown 5) */
  readonly unreadAttachments: number
}


const days = (n: number): string => plural(n, "day")

/** The rule id of an entry ref rule/<id>@<n> (the ref itself if it is not a rule ref). */
const ruleIdOfRef = (ref: string): string => ref.replace(/^rule\//, "").replace(/@\d+$/, "")

const ids = (g: Group): string => g.entries.map((e) => ruleIdOfRef(e.ref)).join(", ")

const part = (g: Group, facts: LineFacts): string | null => {
  const kind: GroupKind = g.kind
  switch (kind) {
    case "source":
      return g.entries[0]?.kind === "meeting" ? plural(g.count, "meeting") : plural(g.count, "mail")
    case "thread":
      return `${plural(g.count, "mail")} in thread`
    case "attachment":
      return facts.unreadAttachments > 0
        ? `${plural(g.count, "attachment")} (${facts.unreadAttachments} unread)`
        : plural(g.count, "attachment")
    case "entity":
      return plural(g.count, "entity", "entities")
    case "predecessor":
      return g.entries.length === 0 ? null : `replaces ${ids(g)}`
    case "successor":
      return g.entries.length === 0 ? null : `superseded by ${ids(g)}`
    case "contradicts":
      return plural(g.count, "contradicting rule")
    case "same-relation":
      return plural(g.count, "related rule")
  }
}

/** The fixed group order (architecture.md §8, graph.md §11). */
export const GROUP_ORDER: ReadonlyArray<GroupKind> = [
  "source", "thread", "attachment", "entity", "predecessor", "successor", "contradicts", "same-relation"
]

const label = (head: LineHead): string => {
  const word = head.kind === "rule" ? "rule" : "note"
  if (head.status === "proposed") return `Unconfirmed ${word}`
  if (head.status === "superseded") return `Superseded ${word}`
  if (head.adoption?.kind === "auto") return `Auto-adopted ${word}`
  return head.kind === "rule" ? "Rule" : "Note"
}

const review = (head: LineHead): string =>
  head.status === "proposed"
    ? `proposed ${days(head.age_days)} ago, not confirmed`
    : `last reviewed ${days(head.age_days)} ago${head.recheck === null ? "" : `, ${head.recheck}`}`

/** The line of a bundle. Groups are read in the fixed group order whatever order they come in. */
export const bundleLine = (head: LineHead, groups: ReadonlyArray<Group>, facts: LineFacts): string => {
  const ordered = [...groups].filter((g) => g.count > 0 || g.entries.length > 0)
    .sort((a, b) => GROUP_ORDER.indexOf(a.kind) - GROUP_ORDER.indexOf(b.kind))
  const parts = ordered.map((g) => part(g, facts)).filter((p): p is string => p !== null)
  const proposed = ordered.reduce((n, g) => n + g.entries.filter((e) => e.proposed).length, 0)
  const withParts = parts.length === 0
    ? ""
    : ` — with ${parts.join(", ")}${proposed > 0 ? ` (of which ${proposed} proposed)` : ""}`
  const date = dayIn(facts.zone, Date.parse(head.date))
  return `${label(head)} from ${date}: ${head.title}${withParts}; ${review(head)}`
}
