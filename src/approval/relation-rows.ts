/**
 * The confirm form's relations editor as rows (kind + name; the reference of an existing
 * relation travels along hidden) and how a post of it becomes the decision schema's
 * `change.relations` — the form still posts to POST /v1/rules/:id/decision and the server
 * parses the rows (architecture.md §10 named a JSON field; a person edits rows, not JSON).
 */
/** The relation rows of the confirm form: at most this many (the schema allows 20 relations). */
export const MAX_RELATION_ROWS = 20
export const RELATION_KINDS = ["customer", "product", "supplier"] as const

/** One row of the relations editor as posted: kind, name and the kept reference (empty strings when blank). */
export interface RelationRow {
  readonly index: number
  readonly kind: string
  readonly name: string
  readonly ref: string
}

/** Every row the form posted (relation_kind_<i>, relation_name_<i>, relation_ref_<i>), blank rows included, in form order. */
export const postedRows = (form: Readonly<Record<string, string>>): Array<RelationRow> => {
  const rows: Array<RelationRow> = []
  for (let i = 0; i < MAX_RELATION_ROWS + 5; i++) {
    const kind = form[`relation_kind_${i}`]
    const name = form[`relation_name_${i}`]
    if (kind === undefined && name === undefined) continue
    rows.push({ index: i, kind: kind ?? "", name: (name ?? "").trim(), ref: (form[`relation_ref_${i}`] ?? "").trim() })
  }
  return rows
}

/** The rows that count: a row with neither a kind nor a name is blank and left out. */
export const filledRows = (form: Readonly<Record<string, string>>): Array<RelationRow> =>
  postedRows(form).filter((r) => r.kind !== "" || r.name !== "")

/**
 * The confirm form's relation rows as the decision schema's `change.relations` ([{kind, name,
 * ref}]), or undefined when the form has no rows (a JSON `relations` field is read as before).
 * Nothing is fixed up here: a row with a kind but no name, or an unknown kind, reaches the
 * schema as it is and is refused with its path (change.relations[k]), which the page names as
 * its row.
 */
export const relationsFromRows = (form: Readonly<Record<string, string>>): Array<{ kind: string; name: string; ref: string | null }> | undefined => {
  if (form.relations_rows === undefined) return undefined
  return filledRows(form).map((r) => ({ kind: r.kind, name: r.name, ref: r.ref === "" ? null : r.ref }))
}

/** An issue path of the decision in the words of the form ("change.relations[1].name" → "Relations, row 3: name"). */
export const issueLabel = (path: string, form: Readonly<Record<string, string>>): string => {
  const rel = /^change\.relations\[(\d+)\](?:\.(kind|name|ref))?$/.exec(path)
  if (rel !== null) {
    const row = filledRows(form)[Number(rel[1])]
    const field = rel[2] === undefined ? "" : `: ${rel[2] === "ref" ? "reference" : rel[2]}`
    return row === undefined ? `Relations${field}` : `Relations, row ${row.index + 1}${field}`
  }
  const field = path.replace(/^change\./, "")
  const labels: Readonly<Record<string, string>> = {
    statement: "Statement", keywords: "Keywords", relations: "Relations", valid_from: "Valid from", valid_until: "Valid until",
    said_at: "Said at", speaker: "Speaker", supersedes: "Supersedes", kind: "Kind", reason: "Reason", version: "Version",
    // the structure page's correction forms
    name: "Name", type: "Type", parent_id: "Parent", aliases: "Aliases", evidence: "Evidence", force: "Different from similar ones",
    from_ref: "From", to_ref: "To", link: "Link", entity: "Entity"
  }
  const key = field.replace(/\[\d+\]$/, "")
  return labels[key] ?? path
}
