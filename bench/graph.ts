/**
 * Entity graph: entity_resolve latency (median, p95) at 1k, 10k and 100k
 * entities in one scope, entity_tree at depth 3 (median, p95) on the same wide and deep tree, and
 * entity_move of a subtree of 1,000 nodes (each move one moveEntity with its checks, the version
 * row and the closure update of graph.md §3.2).
 *
 * The scope is seeded with bulk SQL in one transaction (entity heads, versions 1 / confirm /
 * archive through the triggers), then the writers' own rebuilds: rebuildClosure (closure.ts) and
 * rebuildEntityFts (fts.ts). Names are German and English organisations, departments, projects,
 * customers with legal forms, objects, cases, people and topics, a third of them with aliases, so
 * the trigram pass sees the overlap of a real register ("Schneider …", "Reklamation …").
 *
 * resolve and tree are timed as their routes run them after the scope check: one read
 * transaction on the scope's connection (resolve with the path of the first candidate).
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect, Layer, Logger, LogLevel } from "effect"
import { AppConfig } from "../src/config/config.js"
import { OpsStore } from "../src/db/ops-store.js"
import { ScopeStoreLive } from "../src/services.js"
import { ScopeStore } from "../src/db/scope-store.js"
import { formatEntityId } from "../src/contracts/ids.js"
import { rebuildClosure } from "../src/graph/closure.js"
import { moveEntity } from "../src/graph/entities.js"
import { rebuildEntityFts } from "../src/graph/fts.js"
import { initialsOf, normalize } from "../src/graph/normalize.js"
import { pathOf } from "../src/graph/paths.js"
import { entityTree } from "../src/graph/queries.js"
import { resolve } from "../src/graph/resolve.js"
import { benchConfig } from "./config.js"
import { seededRandom, stats } from "./support.js"

const SCOPE = "bench"

// ---- deterministic randomness -------------------------------------------------------------

const rng = seededRandom(11)
const rand = rng.int
const pick = <A>(xs: ReadonlyArray<A>): A => xs[rand(xs.length)] as A
const chance = (p: number): boolean => rand(1_000_000) < p * 1_000_000

// ---- names ----------------------------------------------------------------------------------

const SURNAMES = [
  "Müller", "Schmidt", "Schneider", "Fischer", "Weber", "Meyer", "Wagner", "Becker", "Schulz", "Hoffmann", "Schäfer",
  "Koch", "Bauer", "Richter", "Klein", "Wolf", "Schröder", "Neumann", "Schwarz", "Zimmermann", "Braun", "Krüger",
  "Hofmann", "Hartmann", "Lange", "Schmitt", "Werner", "Schmitz", "Krause", "Meier", "Lehmann", "Köhler", "Huber",
  "Kaiser", "Fuchs", "Peters", "Lang", "Scholz", "Möller", "Weiß", "Jung", "Hahn", "Vogel", "Keller", "Günther",
  "Frank", "Berger", "Winkler", "Roth", "Beck", "Lorenz", "Baumann", "Franke", "Albrecht", "Ludwig", "Winter",
  "Simon", "Kraus", "Böhm", "Vogt", "Smith", "Johnson", "Williams", "Brown", "Jones", "Miller", "Davis", "Wilson",
  "Taylor", "Anderson", "Thomas", "Moore", "Martin", "Clark", "Walker", "Hall", "Young", "King", "Wright", "Green",
  "Baker", "Adams", "Nelson", "Carter", "Mitchell", "Roberts", "Turner", "Phillips", "Campbell", "Parker", "Evans"
]
const FIRST_NAMES = [
  "Maria", "Anna", "Julia", "Laura", "Sarah", "Lena", "Katharina", "Sabine", "Petra", "Claudia", "Thomas", "Michael",
  "Andreas", "Stefan", "Christian", "Jonas", "Lukas", "Felix", "Jan", "Tobias", "Peter", "Klaus", "Markus",
  "Sebastian", "David", "James", "Emma", "Oliver", "Sophie", "Daniel", "Jörg", "Jürgen", "Björn", "Anke", "Ute"
]
const BRANCHES_DE = [
  "Bau", "Haustechnik", "Elektro", "Logistik", "Metallbau", "Holzbau", "Dachdeckerei", "Sanitär", "Heizungsbau",
  "Autohaus", "Druckerei", "Bäckerei", "Gartenbau", "Transporte", "Immobilien", "Steuerberatung", "Maschinenbau",
  "Anlagenbau", "Feinmechanik", "Kunststofftechnik", "Medizintechnik", "Gebäudereinigung", "Sicherheitstechnik",
  "Spedition", "Landtechnik", "Elektronik", "Verpackung", "Zerspanung", "Gießerei", "Fensterbau"
]
const BRANCHES_EN = [
  "Software", "Consulting", "Engineering", "Trading", "Foods", "Logistics", "Systems", "Solutions", "Industries",
  "Packaging", "Facility Services", "Components", "Analytics", "Marine", "Energy"
]
const CITIES = [
  "Hamburg", "Bremen", "Berlin", "München", "Köln", "Frankfurt", "Stuttgart", "Düsseldorf", "Leipzig", "Dresden",
  "Hannover", "Nürnberg", "Dortmund", "Essen", "Kiel", "Lübeck", "Rostock", "Münster", "Bielefeld", "Augsburg",
  "Freiburg", "Mainz", "Wiesbaden", "Kassel", "Erfurt", "Magdeburg", "Potsdam", "Regensburg", "Ulm", "Heidelberg",
  "London", "Manchester", "Wien", "Zürich", "Linz", "Graz"
]
const LEGAL_DE = ["GmbH", "GmbH", "GmbH", "GmbH & Co. KG", "AG", "KG", "OHG", "UG (haftungsbeschränkt)", "e.K.", "SE", "mbH"]
const LEGAL_EN = ["Ltd", "Ltd.", "Inc.", "LLC", "plc"]
const STREETS = ["Lindenstraße", "Hauptstraße", "Bahnhofstraße", "Gartenweg", "Industriestraße", "Am Hafen", "Schillerstraße", "Goethestraße", "Mühlenweg", "Kirchplatz"]
const PROJECT_KINDS = ["Neubau", "Umbau", "Sanierung", "Migration", "Einführung", "Rollout", "Relaunch", "Ausschreibung", "Modernisierung", "Erweiterung", "Upgrade", "Pilot"]
const PROJECT_THINGS = [
  "Halle 3", "Verwaltungsgebäude", "ERP-System", "Webshop", "Kassensystem", "Lagerverwaltung", "Photovoltaik", "Brandschutz",
  "CRM", "Fuhrpark", "Intranet", "Produktionslinie 2", "Data Warehouse", "Customer Portal", "Kühlhaus", "Telefonanlage"
]
const CASE_KINDS = ["Reklamation", "Garantiefall", "Mahnung Rechnung", "Support-Ticket #", "Schadensfall", "Angebot", "Lieferverzug Bestellung", "Complaint", "Service Request"]
const TOPICS = [
  "Zahlungsziele", "Lieferbedingungen", "Datenschutz", "Skonto", "Preisliste", "Rahmenvertrag", "Arbeitssicherheit", "Reisekosten",
  "Gewährleistung", "Compliance", "Nachhaltigkeit", "Qualitätsmanagement", "Payment Terms", "Onboarding", "Mindestbestellmenge"
]
const ORGS: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
  ["Nordwind Handels GmbH", ["Nordwind"]], ["Hansen & Partner Logistik GmbH & Co. KG", ["Hansen Logistik", "HPL"]],
  ["Brightline Systems Ltd", ["Brightline"]], ["Alpenblick Bau AG", ["Alpenblick"]], ["Lindqvist Engineering SE", ["Lindqvist"]],
  ["Rheintal Foods GmbH", ["Rheintal"]]
]
const DEPARTMENTS: ReadonlyArray<readonly [string, ReadonlyArray<string>, boolean]> = [
  ["Vertrieb Nord", ["VN"], true], ["Vertrieb Süd", ["VS"], true], ["Key Account Management", ["KAM"], true],
  ["Einkauf", [], false], ["Buchhaltung", ["FiBu"], false], ["Personal", ["HR"], false], ["IT", ["EDV"], false],
  ["Logistik", [], false], ["Kundenservice", ["Customer Care"], false], ["Marketing", [], false], ["Produktion", [], false],
  ["Qualitätssicherung", ["QS"], false], ["Recht", ["Legal"], false], ["Controlling", [], false], ["Forschung und Entwicklung", ["F&E"], false]
]
const SUB_DEPARTMENTS = ["Region Hamburg", "Region Bremen", "Region Berlin", "Innendienst", "Außendienst", "Team Großkunden", "Team Handwerk"]

const acronym = (name: string): string =>
  name.split(/[\s&-]+/).filter((t) => /^\p{Lu}/u.test(t) && !LEGAL_DE.includes(t) && !LEGAL_EN.includes(t)).map((t) => t[0]).join("")

const customerName = (): { name: string; aliases: Array<string> } => {
  const s = pick(SURNAMES)
  const style = rand(10)
  const name =
    style < 4 ? `${s} ${pick(BRANCHES_DE)} ${pick(LEGAL_DE)}`
    : style < 6 ? `${pick(BRANCHES_DE)} ${s} ${pick(CITIES)} ${pick(LEGAL_DE)}`
    : style < 7 ? `${s} & ${pick(SURNAMES)} ${pick(LEGAL_DE)}`
    : style < 9 ? `${s} ${pick(BRANCHES_EN)} ${pick(LEGAL_EN)}`
    : `${s} ${pick(BRANCHES_DE)} ${pick(CITIES)}`
  const aliases: Array<string> = []
  if (chance(0.2)) {
    const a = acronym(name)
    if (a.length >= 2) aliases.push(a)
  }
  if (chance(0.15)) aliases.push(`K-${10000 + rand(90000)}`)
  return { name, aliases }
}

// ---- the tree -------------------------------------------------------------------------------

type EntityType = "organisation" | "department" | "project" | "customer" | "object" | "person" | "case" | "topic"

interface Node {
  readonly seq: number
  readonly id: string
  readonly type: EntityType
  readonly name: string
  readonly aliases: ReadonlyArray<string>
  readonly parent: number | null
  readonly level: number
  /** 0 unconfirmed, 1 confirmed, 2 confirmed then archived (leaves only) */
  status: 0 | 1 | 2
  children: number
}

interface Tree {
  readonly nodes: Array<Node>
  /** root of the 1,000-node subtree that is moved, its home parent and the two move targets */
  readonly move: { readonly root: Node; readonly targets: readonly [Node, Node, Node] } | null
  readonly orgs: Array<Node>
  readonly sales: Array<Node>
  readonly departments: Array<Node>
}

/** The subtree that is moved: a department, 9 projects, 90 objects and 900 cases (1,000 nodes). */
export const MOVE_SUBTREE = 1_000

/**
 * n entities: organisations and topics at the top level, 15 departments each (sales departments
 * with sub-departments), then every further entity attached to a random eligible parent by type
 * (customers under sales units, projects under departments, objects under projects and customers,
 * cases under customers, projects and objects, …): sales units grow to thousands of customers,
 * paths reach level 6 or 7.
 */
const buildTree = (n: number): Tree => {
  rng.reset()
  const nodes: Array<Node> = []
  const add = (type: EntityType, name: string, aliases: ReadonlyArray<string>, parent: Node | null): Node => {
    const seq = nodes.length + 1
    const node: Node = {
      seq, id: formatEntityId(SCOPE, seq), type, name, aliases, parent: parent?.seq ?? null,
      level: parent === null ? 1 : parent.level + 1, status: chance(0.8) ? 1 : 0, children: 0
    }
    if (parent !== null) parent.children += 1
    nodes.push(node)
    return node
  }
  const orgCount = Math.max(2, Math.min(ORGS.length, Math.round(n / 25_000)))
  const orgs: Array<Node> = []
  const sales: Array<Node> = []
  const departments: Array<Node> = []
  const pools: Record<"project" | "customer" | "object" | "dept", Array<Node>> = { project: [], customer: [], object: [], dept: [] }
  for (const [name, aliases] of ORGS.slice(0, orgCount)) {
    const org = add("organisation", name, aliases, null)
    orgs.push(org)
    for (const [dname, daliases, isSales] of DEPARTMENTS) {
      const d = add("department", dname, daliases, org)
      departments.push(d)
      if (isSales) {
        sales.push(d)
        for (const sub of SUB_DEPARTMENTS.slice(0, 2 + rand(3))) sales.push(add("department", sub, [], d))
      } else {
        pools.dept.push(d)
      }
    }
  }
  for (const t of TOPICS.slice(0, 5)) add("topic", t, [], null)

  let move: Tree["move"] = null
  if (n >= MOVE_SUBTREE * 5) {
    const home = departments.find((d) => d.name === "IT") as Node
    const root = add("department", "Projektbüro Digitalisierung", ["PBD"], home)
    for (let p = 0; p < 9; p++) {
      const project = add("project", `${PROJECT_KINDS[p % PROJECT_KINDS.length] ?? ""} ${PROJECT_THINGS[p] ?? ""} PBD-${p + 1}`, [], root)
      for (let o = 0; o < 10; o++) {
        const object = add("object", `Server ${pick(["nord", "sued", "core", "edge"])}-${p}${o}`, [], project)
        for (let c = 0; c < 10; c++) add("case", `Change Request CR-${p}${o}${c}`, [], object)
      }
    }
    const region = sales.find((s) => s.name === "Region Hamburg") as Node
    const otherIt = departments.filter((d) => d.name === "IT")[1] as Node
    move = { root, targets: [region, otherIt, home] }
  }

  const parentFor = (type: EntityType): Node => {
    const from = (...lists: Array<Array<Node>>): Node => {
      const all = lists.filter((l) => l.length > 0)
      const list = all.length === 0 ? pools.dept : pick(all)
      return pick(list)
    }
    switch (type) {
      case "customer": return pick(sales)
      case "project": return from(pools.dept)
      case "department": return from(pools.dept)
      case "object": return from(pools.project, pools.customer)
      case "case": return from(pools.customer, pools.project, pools.object)
      case "person": return from(pools.customer, pools.dept, pools.project)
      default: return from(pools.project, pools.dept)
    }
  }
  const TYPE_WEIGHTS: ReadonlyArray<readonly [EntityType, number]> = [
    ["customer", 30], ["project", 11], ["object", 14], ["case", 28], ["person", 12], ["topic", 3], ["department", 2]
  ]
  const typeOf = (): EntityType => {
    let x = rand(100)
    for (const [t, w] of TYPE_WEIGHTS) {
      if (x < w) return t
      x -= w
    }
    return "case"
  }
  while (nodes.length < n) {
    const type = typeOf()
    const parent = parentFor(type)
    if (parent.level >= 7) continue
    const year = 2024 + rand(3)
    let name: string
    let aliases: Array<string> = []
    switch (type) {
      case "customer": ({ name, aliases } = customerName()); break
      case "project":
        name = `${pick(PROJECT_KINDS)} ${pick(PROJECT_THINGS)} ${chance(0.5) ? pick(CITIES) : String(year)}`
        if (chance(0.4)) aliases = [`P-${year}-${String(rand(10000)).padStart(4, "0")}`]
        break
      case "object": {
        const k = rand(5)
        name = k === 0 ? `Lager ${pick(CITIES)} ${pick(STREETS)}`
          : k === 1 ? `Maschine CNC-${String(rand(100)).padStart(2, "0")}`
          : k === 2 ? `Fahrzeug ${pick(["HH", "HB", "B", "M", "K"])}-GN ${rand(1000)}`
          : k === 3 ? `Gebäude ${pick(STREETS)} ${1 + rand(120)}`
          : `Filiale ${pick(CITIES)}`
        break
      }
      case "case": name = `${pick(CASE_KINDS)} ${year}-${rand(100000)}`; break
      case "person": {
        const first = pick(FIRST_NAMES)
        const last = pick(SURNAMES)
        name = `${first} ${last}`
        if (chance(0.3)) aliases = [`${first[0] ?? ""}. ${last}`]
        break
      }
      case "department": name = `${pick(SUB_DEPARTMENTS)} ${pick(CITIES)}`; break
      default: name = `${pick(TOPICS)} ${year}`
    }
    const node = add(type, name, aliases, parent)
    if (type === "customer") pools.customer.push(node)
    else if (type === "project") pools.project.push(node)
    else if (type === "object") pools.object.push(node)
    else if (type === "department") pools.dept.push(node)
  }
  // about 1.5 % of the confirmed leaves outside the moved subtree are archived (never a department
  // or an organisation, so every move target stays a valid parent)
  const ARCHIVABLE: ReadonlySet<EntityType> = new Set(["customer", "project", "object", "case", "person", "topic"])
  const moved = new Set<number>()
  if (move !== null) for (let s = move.root.seq; s < move.root.seq + MOVE_SUBTREE; s++) moved.add(s)
  for (const node of nodes) {
    if (node.children === 0 && node.status === 1 && !moved.has(node.seq) && ARCHIVABLE.has(node.type) && chance(0.015)) node.status = 2
  }
  return { nodes, move, orgs, sales, departments }
}

// ---- seeding --------------------------------------------------------------------------------

const T0 = Date.parse("2025-01-06T08:00:00Z")
const instant = (seq: number, plus = 0) => new Date(T0 + seq * 600_000 + plus * 86_400_000).toISOString().replace(/\.\d{3}Z$/, "Z")
const day = (iso: string) => iso.slice(0, 10)

const batches = <A>(xs: ReadonlyArray<A>, size: number): Array<ReadonlyArray<A>> =>
  Array.from({ length: Math.ceil(xs.length / size) }, (_, i) => xs.slice(i * size, (i + 1) * size))

/** Heads, versions (create; confirm for 80 %; archive for some leaves), closure and FTS in one transaction. */
const seedTree = (sql: SqlClient, tree: Tree) =>
  sql.withTransaction(Effect.gen(function*() {
    const byseq = (s: number | null) => (s === null ? null : tree.nodes[s - 1]?.id ?? null)
    for (const batch of batches(tree.nodes, 2_000)) {
      yield* sql`INSERT INTO entity ${sql.insert(batch.map((n) => ({
        seq: n.seq, id: n.id, scope: SCOPE, created_at: instant(n.seq), created_by: n.seq % 3 === 0 ? "import" : "agent"
      })))}`.raw
    }
    const version = (n: Node, v: 1 | 2 | 3) => {
      const at = instant(n.seq, v === 1 ? 0 : v === 2 ? 3 : 60)
      return {
        id: n.id, version: v, type: n.type, name: n.name, aliases: JSON.stringify(n.aliases), parent_id: byseq(n.parent),
        status: v === 1 ? "unconfirmed" : v === 2 ? "active" : "archived",
        valid_from: day(instant(n.seq)), valid_to: v === 3 ? day(at) : null, evidence: null,
        change: v === 1 ? "create" : v === 2 ? "confirm" : "archive",
        channel: v === 1 ? (n.seq % 3 === 0 ? "api" : "mcp") : "approval",
        changed_by: v === 1 ? "svc-bench" : "person:1", changed_at: at,
        reason: v === 1 ? "created via mcp" : v === 2 ? "confirmed" : "no longer a customer"
      }
    }
    const rows = [
      ...tree.nodes.map((n) => version(n, 1)),
      ...tree.nodes.filter((n) => n.status >= 1).map((n) => version(n, 2)),
      ...tree.nodes.filter((n) => n.status === 2).map((n) => version(n, 3))
    ]
    for (const batch of batches(rows, 1_000)) yield* sql`INSERT INTO entity_version ${sql.insert(batch)}`.raw
    yield* rebuildClosure(sql)
    yield* rebuildEntityFts(sql)
  }))

// ---- queries --------------------------------------------------------------------------------

type Kind = "exact" | "typo" | "alias" | "initials" | "none"
const KINDS: ReadonlyArray<Kind> = ["exact", "typo", "alias", "initials", "none"]
const PER_KIND = 20

const NONSENSE = [
  "Quantenkryptographie", "Pinguin Mondlandung", "Vulkan Observatorium", "Xylophon", "Zebrastreifen Ost", "Sternwarte Kap",
  "Orchidee", "Walross Express", "Bernstein Kathedrale", "Trampolin", "Kolibri Werft", "Nebelhorn", "Quokka", "Saturnring",
  "Dromedar", "Eiszeit", "Jadegrün Atelier", "Lavendel Expedition", "Oktopus Archiv", "Tundra"
]

/** One letter dropped or two neighbours swapped in the longest word (an edit distance of 1 or 2). */
const typo = (name: string): string => {
  const words = name.split(" ")
  let at = 0
  words.forEach((w, i) => { if (w.length > (words[at] ?? "").length) at = i })
  const w = words[at] ?? ""
  if (w.length < 5) return name
  const i = 1 + rand(w.length - 3)
  words[at] = rand(2) === 0 ? w.slice(0, i) + w.slice(i + 1) : w.slice(0, i) + (w[i + 1] ?? "") + (w[i] ?? "") + w.slice(i + 2)
  return words.join(" ")
}

/** The written variants of an exact match: as stored, lower case, umlauts spelled out, legal form dropped. */
const exactVariant = (name: string): string => {
  switch (rand(4)) {
    case 0: return name
    case 1: return name.toLowerCase()
    case 2: return name.replace(/ä/g, "ae").replace(/ö/g, "oe").replace(/ü/g, "ue").replace(/ß/g, "ss")
    default: return name.replace(/\s+(GmbH & Co\. KG|GmbH|AG|KG|Ltd\.?|Inc\.|LLC|plc|SE|mbH)$/, "")
  }
}

const queriesOf = (tree: Tree): Array<{ kind: Kind; q: string }> => {
  rng.reset(99)
  const live = tree.nodes.filter((n) => n.status !== 2)
  const some = (f: (n: Node) => boolean, k: number): Array<Node> => {
    const pool = live.filter(f)
    return Array.from({ length: k }, () => pick(pool))
  }
  const multi = (n: Node) => {
    const key = normalize(n.name)
    return key.split(" ").length >= 2 && key.split(" ").length <= 6 && /^\p{L}+$/u.test(initialsOf(key))
  }
  return [
    ...some((n) => n.type !== "case", PER_KIND).map((n) => ({ kind: "exact" as const, q: exactVariant(n.name) })),
    ...some((n) => n.name.split(" ").some((w) => w.length >= 5), PER_KIND).map((n) => ({ kind: "typo" as const, q: typo(n.name) })),
    ...some((n) => n.aliases.length > 0, PER_KIND).map((n) => ({ kind: "alias" as const, q: pick(n.aliases) })),
    ...some(multi, PER_KIND).map((n) => ({ kind: "initials" as const, q: initialsOf(normalize(n.name)).toUpperCase() })),
    ...NONSENSE.slice(0, PER_KIND).map((q) => ({ kind: "none" as const, q }))
  ]
}

// ---- measuring ------------------------------------------------------------------------------


const timed = <A, E, R>(e: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const t0 = performance.now()
    const value = yield* e
    return { value, ms: performance.now() - t0 }
  })

const ROUNDS = 2

const TREE_AT = ["top", "organisation", "sales unit", "department", "customer"] as const
interface TreeCall {
  readonly at: typeof TREE_AT[number]
  readonly parent: string | null
  readonly page: number
}

const runAt = (n: number, moves: number) =>
  Effect.gen(function*() {
    const store = yield* ScopeStore
    yield* store.create(SCOPE)
    const { sql } = yield* store.use(SCOPE)
    const tree = buildTree(n)
    const seeded = yield* timed(seedTree(sql, tree))

    // resolve: a warm-up pass, then ROUNDS measured passes over every query
    const queries = queriesOf(tree)
    const resolveOnce = (q: string) => store.read(SCOPE, ({ sql }) => Effect.gen(function*() {
      const candidates = yield* resolve(sql, { q, type: null })
      if (candidates[0] !== undefined) yield* pathOf(sql, candidates[0].id)
      return candidates.length
    }))
    for (const { q } of queries) yield* resolveOnce(q)
    const all: Array<number> = []
    const byKind = new Map<Kind, Array<number>>(KINDS.map((k) => [k, []]))
    const found = new Map<Kind, number>(KINDS.map((k) => [k, 0]))
    for (let round = 0; round < ROUNDS; round++) {
      for (const { kind, q } of queries) {
        const { value, ms } = yield* timed(resolveOnce(q))
        all.push(ms)
        byKind.get(kind)?.push(ms)
        if (round === 0 && value > 0) found.set(kind, (found.get(kind) ?? 0) + 1)
      }
    }

    // tree at depth 3: the top level (pages 1–2), each organisation, each sales unit (first, second
    // and last page), ten other departments and ten customers with children
    const pagesOf = (node: Node) => Math.max(1, Math.ceil(node.children / 50))
    const calls: Array<TreeCall> = [{ at: "top", parent: null, page: 1 }, { at: "top", parent: null, page: 2 }]
    for (const o of tree.orgs) calls.push({ at: "organisation", parent: o.id, page: 1 })
    for (const s of tree.sales) {
      for (const page of new Set([1, Math.min(2, pagesOf(s)), pagesOf(s)])) calls.push({ at: "sales unit", parent: s.id, page })
    }
    rng.reset(5)
    const depts = tree.departments.filter((d) => !tree.sales.includes(d))
    for (let i = 0; i < 10; i++) calls.push({ at: "department", parent: pick(depts).id, page: 1 })
    const parents = tree.nodes.filter((x) => x.type === "customer" && x.children > 0 && x.status !== 2)
    for (let i = 0; i < 10 && parents.length > 0; i++) calls.push({ at: "customer", parent: pick(parents).id, page: 1 })
    const treeOnce = (c: TreeCall) =>
      store.read(SCOPE, ({ sql }) => entityTree(sql, { scope: SCOPE, parent: c.parent, depth: 3, page: c.page }))
    for (const c of calls) yield* treeOnce(c)
    const treeMs: Array<number> = []
    const treeAt = new Map<TreeCall["at"], Array<number>>(TREE_AT.map((k) => [k, []]))
    let nodesShown = 0
    for (let round = 0; round < ROUNDS; round++) {
      for (const c of calls) {
        const { value, ms } = yield* timed(treeOnce(c))
        treeMs.push(ms)
        treeAt.get(c.at)?.push(ms)
        if (round === 0) nodesShown = Math.max(nodesShown, value.nodes.length)
      }
    }

    // move of the 1,000-node subtree, back and forth between three parents at levels 2 and 3
    const moveMs: Array<number> = []
    if (tree.move !== null && moves > 0) {
      const { root, targets } = tree.move
      for (let i = 0; i < moves; i++) {
        const target = targets[i % targets.length] as Node
        const { value, ms } = yield* timed(moveEntity(root.id, { scope: SCOPE, parent_id: target.id, reason: "bench move" }, { grantId: "svc-bench", channel: "mcp" }))
        if (!value.moved) return yield* Effect.dieMessage("the bench move did not move")
        moveMs.push(ms)
        // the closure rows of the subtree: every node has one row per level it sits at
        const rows = yield* sql<{ n: number }>`SELECT count(*) AS n FROM entity_closure
          WHERE descendant_id IN (SELECT descendant_id FROM entity_closure WHERE ancestor_id = ${root.id})`
        const level = target.level + 1
        const expected = 1 * level + 9 * (level + 1) + 90 * (level + 2) + 900 * (level + 3)
        if (rows[0]?.n !== expected) return yield* Effect.dieMessage(`closure after move ${i + 1}: ${rows[0]?.n} rows, expected ${expected}`)
      }
    }

    const depth = yield* sql<{ d: number }>`SELECT max(depth) + 1 AS d FROM entity_closure`
    const closure = yield* sql<{ n: number }>`SELECT count(*) AS n FROM entity_closure`
    return {
      n, seededMs: seeded.ms, resolve: stats(all), byKind: new Map([...byKind].map(([k, v]) => [k, stats(v)])), found,
      tree: stats(treeMs), treeAt: new Map([...treeAt].map(([k, v]) => [k, stats(v)])), treeCalls: calls.length, nodesShown, move: moveMs.length > 0 ? stats(moveMs) : null, moveMs,
      levels: depth[0]?.d ?? 0, closureRows: closure[0]?.n ?? 0, widest: Math.max(...tree.nodes.map((x) => x.children))
    }
  })

const fmt = (x: number, d = 1) => x.toFixed(d)

/**
 * Prints one row per size. BENCH_GRAPH_SIZES=1000,10000 picks the sizes (default 1k, 10k, 100k);
 * BENCH_GRAPH_MOVES the repetitions of the move (default 5; sizes below 5k have no 1,000-node subtree).
 */
export const graphBench = async (sizes: ReadonlyArray<number> = [1_000, 10_000, 100_000]): Promise<void> => {
  const moves = Number(process.env.BENCH_GRAPH_MOVES ?? "5")
  console.log(`\nEntity graph, one scope (German/English names with legal forms and aliases; resolve: ${KINDS.length} kinds × ${PER_KIND} queries × ${ROUNDS} rounds after a warm-up;`)
  console.log(`tree: depth 3 on the top level, organisations, sales units (first, second, last page), departments, customers × ${ROUNDS} rounds; move: ${moves} moves of ${MOVE_SUBTREE} nodes)`)
  console.log("entities | levels | widest | closure rows | seed s | resolve median / p95 ms | exact / typo / alias / initials / none median ms | found of 20 (e/t/a/i/n) | tree d3 median / p95 ms | move 1,000 median / max ms")
  const rows: Array<{ n: number; resolve: number; tree: number }> = []
  for (const n of sizes) {
    const dir = mkdtempSync(join(tmpdir(), "gn-bench-graph-"))
    try {
      const layer = ScopeStoreLive().pipe(Layer.provideMerge(OpsStore.Default), Layer.provideMerge(Layer.succeed(AppConfig, benchConfig(dir))))
      const r = await Effect.runPromise(runAt(n, Number.isInteger(moves) && moves >= 0 ? moves : 5).pipe(
        Effect.provide(layer), Effect.scoped, Logger.withMinimumLogLevel(LogLevel.Warning)))
      rows.push({ n, resolve: r.resolve.median, tree: r.tree.median })
      const kinds = KINDS.map((k) => fmt(r.byKind.get(k)?.median ?? 0, 2)).join(" / ")
      const found = KINDS.map((k) => String(r.found.get(k) ?? 0)).join("/")
      console.log(
        `${String(n).padStart(8)} | ${String(r.levels).padStart(6)} | ${String(r.widest).padStart(6)} | ${String(r.closureRows).padStart(12)} | ` +
        `${fmt(r.seededMs / 1000).padStart(6)} | ${fmt(r.resolve.median, 2).padStart(10)} / ${fmt(r.resolve.p95, 2).padStart(10)} | ` +
        `${kinds.padStart(47)} | ${found.padStart(23)} | ${fmt(r.tree.median, 2).padStart(10)} / ${fmt(r.tree.p95, 2).padStart(10)} | ` +
        `${r.move === null ? "—".padStart(26) : `${fmt(r.move.median).padStart(12)} / ${fmt(r.move.max).padStart(11)}`}`
      )
      const at = TREE_AT.map((k) => `${k} ${fmt(r.treeAt.get(k)?.median ?? 0, 2)} / ${fmt(r.treeAt.get(k)?.p95 ?? 0, 2)}`).join(", ")
      console.log(`         tree d3 at ${n} by parent, median / p95 ms: ${at} (${r.treeCalls} calls, up to ${r.nodesShown} nodes)`)
      if (r.moveMs.length > 0) console.log(`         moves of ${MOVE_SUBTREE} nodes at ${n}: ${r.moveMs.map((m) => fmt(m)).join(", ")} ms`)
    } finally {
      if (process.env.BENCH_KEEP === "1") console.log(`kept ${dir}`)
      else rmSync(dir, { recursive: true, force: true })
    }
  }
  const ten = rows.find((r) => r.n === 10_000)
  const hundred = rows.find((r) => r.n === 100_000)
  if (ten !== undefined && hundred !== undefined) {
    console.log(`growth from 10k to 100k entities: resolve median ×${fmt(hundred.resolve / ten.resolve)}, tree d3 median ×${fmt(hundred.tree / ten.tree)}`)
  }
}
