/**
 * Source graph for the architecture tests (architecture.md §2 AT1–AT6, graph.md §13).
 *
 * Parses every source file under `<root>/src` with the TypeScript compiler API (syntax only, no
 * program, no type checker) and records, per file:
 *   - its relative imports / `export … from` / `import("…")` type nodes, resolved to repo-relative
 *     paths (`./x.js` → `src/…/x.ts`),
 *   - its dynamic `import()` calls (literal specifier or null when computed),
 *   - the text of every string literal, no-substitution template literal and template expression
 *     (head + spans, substitutions as `${…}`), plus constant-folded `"a" + "b"` chains — SQL lives
 *     in such literals, comments are ignored,
 *   - the first argument of every `.registerTool(` / `.tool(` / `.registerPrompt(` / `.prompt(` call.
 *
 * The rules are plain functions `checkATn(graph) → Violation[]` so the real tests and the scanner's
 * self-tests (fixtures in a temp dir) share them.
 */
import ts from "typescript"
import fs from "node:fs"
import path from "node:path"

// ---------------------------------------------------------------------------------------------
// Model

export type EdgeKind = "import" | "export" | "import-equals" | "import-type" | "dynamic"

export interface ImportEdge {
  /** The specifier as written, e.g. "../decision/decide.js"; null for a computed dynamic import. */
  readonly specifier: string | null
  /** Repo-relative posix path of the target for a relative specifier (`.js` mapped to `.ts`), else null. */
  readonly target: string | null
  readonly kind: EdgeKind
  /** `import type …` / `export type … from` / `import("…")` in a type position. */
  readonly typeOnly: boolean
  readonly line: number
}

export interface StringEntry {
  /** Literal text; template substitutions appear as `${…}` (or inlined when they are a literal). */
  readonly text: string
  readonly kind: "literal" | "template" | "concat"
  readonly line: number
}

export interface Registration {
  /** registerTool | tool | registerPrompt | prompt */
  readonly method: string
  /** The name when the first argument resolves to string literal(s) in this file, else null. */
  readonly names: ReadonlyArray<string> | null
  /** Source text of the first argument (for messages). */
  readonly argText: string
  readonly line: number
}

export interface SourceFileInfo {
  /** Repo-relative posix path, e.g. "src/mcp/server.ts". */
  readonly path: string
  /** Every relative static import / export-from / import-type edge. */
  readonly imports: ReadonlyArray<ImportEdge>
  /** Every dynamic `import()` call, relative or not. */
  readonly dynamicImports: ReadonlyArray<ImportEdge>
  readonly strings: ReadonlyArray<StringEntry>
  readonly registrations: ReadonlyArray<Registration>
  /** String values of `name: "…"` properties in object literals (AT4 fallback). */
  readonly nameProperties: ReadonlyArray<StringEntry>
}

export interface SourceGraph {
  /** Absolute root the paths are relative to; null for an in-memory graph. */
  readonly root: string | null
  readonly files: ReadonlyMap<string, SourceFileInfo>
}

export interface Violation {
  readonly rule: string
  readonly file: string
  readonly line: number
  readonly message: string
}

export const formatViolation = (v: Violation): string => `${v.rule} ${v.file}:${v.line} ${v.message}`

// ---------------------------------------------------------------------------------------------
// Listing and parsing

const SOURCE_EXTENSIONS = [".ts", ".mts", ".cts", ".tsx", ".js", ".mjs", ".cjs"]

const toPosix = (p: string): string => p.split(path.sep).join("/")

/** Every source file under `<root>/src`, repo-relative posix paths, sorted. */
export const listSourceFiles = (root: string, dir = "src"): Array<string> => {
  const out: Array<string> = []
  const walk = (rel: string): void => {
    const abs = path.join(root, rel)
    if (!fs.existsSync(abs)) return
    for (const entry of fs.readdirSync(abs, { withFileTypes: true })) {
      const childRel = `${rel}/${entry.name}`
      if (entry.isDirectory()) {
        if (entry.name === "node_modules") continue
        walk(childRel)
      } else if (entry.isFile() && SOURCE_EXTENSIONS.some((ext) => entry.name.endsWith(ext))) {
        out.push(childRel)
      }
    }
  }
  walk(toPosix(dir))
  return out.sort()
}

/** Reads and parses every file under `<root>/src`. */
export const buildSourceGraph = (root: string): SourceGraph => {
  const absRoot = path.resolve(root)
  const texts = new Map<string, string>()
  for (const rel of listSourceFiles(absRoot)) {
    texts.set(rel, fs.readFileSync(path.join(absRoot, rel), "utf8"))
  }
  return buildSourceGraphFromTexts(texts, absRoot)
}

/** Parses the given files (repo-relative posix path → text). */
export const buildSourceGraphFromTexts = (
  texts: ReadonlyMap<string, string> | Readonly<Record<string, string>>,
  root: string | null = null
): SourceGraph => {
  const entries: Array<[string, string]> = texts instanceof Map
    ? [...(texts as ReadonlyMap<string, string>).entries()]
    : Object.entries(texts as Readonly<Record<string, string>>)
  const known = new Set(entries.map(([p]) => p))
  const files = new Map<string, SourceFileInfo>()
  for (const [p, text] of entries.sort(([a], [b]) => a.localeCompare(b))) {
    files.set(p, parseSourceFile(p, text, known))
  }
  return { root, files }
}

const scriptKindOf = (p: string): ts.ScriptKind => {
  if (p.endsWith(".tsx")) return ts.ScriptKind.TSX
  if (p.endsWith(".js") || p.endsWith(".mjs") || p.endsWith(".cjs")) return ts.ScriptKind.JS
  return ts.ScriptKind.TS
}

/**
 * Resolves a relative specifier from `fromFile` to a repo-relative path. `.js`/`.mjs`/`.cjs` map to
 * `.ts`/`.mts`/`.cts` unless only the JS file exists; an extensionless specifier tries `.ts` and
 * `/index.ts`. A target that does not exist keeps its mapped name so rules still see it.
 */
export const resolveRelative = (fromFile: string, specifier: string, known: ReadonlySet<string>): string => {
  const base = path.posix.normalize(path.posix.join(path.posix.dirname(fromFile), specifier))
  const jsToTs: ReadonlyArray<[string, string]> = [[".js", ".ts"], [".mjs", ".mts"], [".cjs", ".cts"], [".jsx", ".tsx"]]
  for (const [js, tsExt] of jsToTs) {
    if (base.endsWith(js)) {
      const mapped = base.slice(0, -js.length) + tsExt
      if (known.has(mapped) || !known.has(base)) return mapped
      return base
    }
  }
  if (SOURCE_EXTENSIONS.some((ext) => base.endsWith(ext)) || base.endsWith(".json")) return base
  for (const candidate of [`${base}.ts`, `${base}/index.ts`, `${base}.tsx`, `${base}/index.tsx`]) {
    if (known.has(candidate)) return candidate
  }
  return `${base}.ts`
}

const isRelative = (s: string): boolean => s === "." || s === ".." || s.startsWith("./") || s.startsWith("../")

const stringValue = (node: ts.Node): string | null =>
  ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) ? node.text : null

const unwrap = (node: ts.Expression): ts.Expression => {
  let e = node
  for (;;) {
    if (ts.isParenthesizedExpression(e) || ts.isAsExpression(e) || ts.isSatisfiesExpression(e)
      || ts.isTypeAssertionExpression(e) || ts.isNonNullExpression(e)) {
      e = e.expression
    } else {
      return e
    }
  }
}

export const parseSourceFile = (filePath: string, text: string, known: ReadonlySet<string>): SourceFileInfo => {
  const sf = ts.createSourceFile(filePath, text, ts.ScriptTarget.Latest, true, scriptKindOf(filePath))
  const lineOf = (node: ts.Node): number => sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1

  const imports: Array<ImportEdge> = []
  const dynamicImports: Array<ImportEdge> = []
  const strings: Array<StringEntry> = []
  const registrations: Array<Registration> = []
  const nameProperties: Array<StringEntry> = []

  const addStatic = (specifier: string, kind: EdgeKind, typeOnly: boolean, node: ts.Node): void => {
    if (!isRelative(specifier)) return
    imports.push({ specifier, target: resolveRelative(filePath, specifier, known), kind, typeOnly, line: lineOf(node) })
  }

  // Same-file constants for AT4: `const X = "lit"` and `const X = { k: "lit" }`.
  const constStrings = new Map<string, Array<string>>()
  const constObjects = new Map<string, ts.ObjectLiteralExpression>()
  const collectConsts = (node: ts.Node): void => {
    if (ts.isVariableDeclarationList(node) && (node.flags & ts.NodeFlags.Const) !== 0) {
      for (const decl of node.declarations) {
        if (!ts.isIdentifier(decl.name) || decl.initializer === undefined) continue
        const init = unwrap(decl.initializer)
        const s = stringValue(init)
        if (s !== null) {
          constStrings.set(decl.name.text, [...(constStrings.get(decl.name.text) ?? []), s])
        } else if (ts.isObjectLiteralExpression(init)) {
          constObjects.set(decl.name.text, init)
        }
      }
    }
    ts.forEachChild(node, collectConsts)
  }
  collectConsts(sf)

  const propertyOf = (obj: ts.ObjectLiteralExpression, key: string): ts.Expression | null => {
    for (const prop of obj.properties) {
      if (!ts.isPropertyAssignment(prop)) continue
      const name = ts.isIdentifier(prop.name) || ts.isStringLiteral(prop.name) ? prop.name.text : null
      if (name === key) return prop.initializer
    }
    return null
  }

  const resolveNames = (arg: ts.Expression): Array<string> | null => {
    const e = unwrap(arg)
    const s = stringValue(e)
    if (s !== null) return [s]
    if (ts.isIdentifier(e)) return constStrings.get(e.text) ?? null
    if (ts.isPropertyAccessExpression(e) && ts.isIdentifier(e.expression)) {
      const obj = constObjects.get(e.expression.text)
      const init = obj === undefined ? null : propertyOf(obj, e.name.text)
      return init === null ? null : resolveNames(init)
    }
    if (ts.isConditionalExpression(e)) {
      const a = resolveNames(e.whenTrue)
      const b = resolveNames(e.whenFalse)
      return a === null || b === null ? null : [...a, ...b]
    }
    return null
  }

  /** Text of a template substitution: inlined when it is a literal or `f("literal")`. */
  const substitution = (expr: ts.Expression): string => {
    const e = unwrap(expr)
    const s = stringValue(e)
    if (s !== null) return s
    if (ts.isCallExpression(e) && e.arguments.length === 1) {
      const first = e.arguments[0]
      const a = first === undefined ? null : stringValue(unwrap(first))
      if (a !== null && (ts.isIdentifier(e.expression) || ts.isPropertyAccessExpression(e.expression))) return a
    }
    return "${…}"
  }

  const templateText = (node: ts.TemplateExpression): string =>
    node.head.text + node.templateSpans.map((span) => substitution(span.expression) + span.literal.text).join("")

  const concatOperands = (node: ts.Expression, out: Array<ts.Expression>): void => {
    const e = ts.isParenthesizedExpression(node) ? node.expression : node
    if (ts.isBinaryExpression(e) && e.operatorToken.kind === ts.SyntaxKind.PlusToken) {
      concatOperands(e.left, out)
      concatOperands(e.right, out)
    } else {
      out.push(e)
    }
  }

  const REGISTER_METHODS = new Set(["registerTool", "tool", "registerPrompt", "prompt"])

  const visit = (node: ts.Node): void => {
    // static imports / exports
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      addStatic(node.moduleSpecifier.text, "import", node.importClause?.isTypeOnly === true, node)
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier !== undefined && ts.isStringLiteral(node.moduleSpecifier)) {
      addStatic(node.moduleSpecifier.text, "export", node.isTypeOnly, node)
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)
      && ts.isStringLiteral(node.moduleReference.expression)) {
      addStatic(node.moduleReference.expression.text, "import-equals", node.isTypeOnly, node)
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      addStatic(node.argument.literal.text, "import-type", true, node)
    }

    if (ts.isCallExpression(node)) {
      // dynamic import()
      if (node.expression.kind === ts.SyntaxKind.ImportKeyword) {
        const first = node.arguments[0]
        const spec = first === undefined ? null : stringValue(unwrap(first))
        dynamicImports.push({
          specifier: spec,
          target: spec !== null && isRelative(spec) ? resolveRelative(filePath, spec, known) : null,
          kind: "dynamic",
          typeOnly: false,
          line: lineOf(node)
        })
      }
      // MCP registrations
      const callee = node.expression
      let method: string | null = null
      if (ts.isPropertyAccessExpression(callee)) method = callee.name.text
      else if (ts.isElementAccessExpression(callee)) method = stringValue(callee.argumentExpression)
      const first = node.arguments[0]
      if (method !== null && REGISTER_METHODS.has(method) && first !== undefined) {
        registrations.push({ method, names: resolveNames(first), argText: first.getText(sf), line: lineOf(node) })
      }
    }

    // strings
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) {
      strings.push({ text: node.text, kind: "literal", line: lineOf(node) })
    } else if (ts.isTemplateExpression(node)) {
      strings.push({ text: templateText(node), kind: "template", line: lineOf(node) })
    } else if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken) {
      const parent = node.parent
      const nested = ts.isBinaryExpression(parent) && parent.operatorToken.kind === ts.SyntaxKind.PlusToken
        || ts.isParenthesizedExpression(parent) && ts.isBinaryExpression(parent.parent)
          && parent.parent.operatorToken.kind === ts.SyntaxKind.PlusToken
      if (!nested) {
        const operands: Array<ts.Expression> = []
        concatOperands(node, operands)
        const parts = operands.map((op) => {
          const s = stringValue(op)
          if (s !== null) return { s, lit: true }
          if (ts.isTemplateExpression(op)) return { s: templateText(op), lit: true }
          return { s: "${…}", lit: false }
        })
        if (parts.some((p) => p.lit)) {
          strings.push({ text: parts.map((p) => p.s).join(""), kind: "concat", line: lineOf(node) })
        }
      }
    }

    // `name: "…"` in object literals
    if (ts.isPropertyAssignment(node) && ts.isObjectLiteralExpression(node.parent)
      && (ts.isIdentifier(node.name) || ts.isStringLiteral(node.name)) && node.name.text === "name") {
      const s = stringValue(unwrap(node.initializer))
      if (s !== null) nameProperties.push({ text: s, kind: "literal", line: lineOf(node) })
    }

    ts.forEachChild(node, visit)
  }
  visit(sf)

  return { path: filePath, imports, dynamicImports, strings, registrations, nameProperties }
}

// ---------------------------------------------------------------------------------------------
// Path predicates and closure

/** True when `file` lies inside directory `dir` (repo-relative, no trailing slash). */
export const isUnder = (file: string, dir: string): boolean => file.startsWith(`${dir}/`)

export const filesWhere = (graph: SourceGraph, pred: (file: string) => boolean): Array<string> =>
  [...graph.files.keys()].filter(pred)

export interface ClosureOptions {
  /** Follow relative dynamic `import()` edges too (default true). */
  readonly dynamic?: boolean
  /** Follow `import type` edges (default true: a type import is still an import). */
  readonly typeOnly?: boolean
}

/**
 * Transitive relative-import closure of `seeds` (seeds included). The map value is the file through
 * which a file was first reached (null for a seed), so `importChain` can explain a violation.
 * Targets that are not in the graph (not yet written) are included but not expanded.
 */
export const importClosure = (
  graph: SourceGraph,
  seeds: Iterable<string>,
  options: ClosureOptions = {}
): Map<string, string | null> => {
  const followDynamic = options.dynamic ?? true
  const followTypes = options.typeOnly ?? true
  const reached = new Map<string, string | null>()
  const queue: Array<string> = []
  for (const s of seeds) {
    if (!reached.has(s)) {
      reached.set(s, null)
      queue.push(s)
    }
  }
  for (let i = 0; i < queue.length; i++) {
    const file = queue[i] as string
    const info = graph.files.get(file)
    if (info === undefined) continue
    const edges = followDynamic ? [...info.imports, ...info.dynamicImports] : info.imports
    for (const edge of edges) {
      if (edge.target === null || (edge.typeOnly && !followTypes)) continue
      if (!reached.has(edge.target)) {
        reached.set(edge.target, file)
        queue.push(edge.target)
      }
    }
  }
  return reached
}

/** "a.ts → b.ts → c.ts" for a file reached by `importClosure`. */
export const importChain = (closure: ReadonlyMap<string, string | null>, file: string): string => {
  const chain: Array<string> = []
  let cur: string | null | undefined = file
  while (cur !== null && cur !== undefined && chain.length < 1000) {
    chain.unshift(cur)
    cur = closure.get(cur)
  }
  return chain.join(" → ")
}

// ---------------------------------------------------------------------------------------------
// Rules

const isDecisionPerson = (f: string): boolean => isUnder(f, "src/decision") && !isUnder(f, "src/decision/policy")
const isMigration = (f: string): boolean => isUnder(f, "src/db/migrations")

const closureViolations = (
  rule: string,
  graph: SourceGraph,
  seeds: ReadonlyArray<string>,
  forbidden: (f: string) => boolean,
  options: ClosureOptions
): Array<Violation> => {
  const closure = importClosure(graph, seeds, options)
  const out: Array<Violation> = []
  for (const [file, via] of closure) {
    if (!forbidden(file) || via === null) continue
    const edge = graph.files.get(via)?.imports.concat(graph.files.get(via)?.dynamicImports ?? [])
      .find((e) => e.target === file)
    out.push({ rule, file: via, line: edge?.line ?? 0, message: `reaches ${file}: ${importChain(closure, file)}` })
  }
  return out
}

/** AT1: the import closure of src/mcp/** holds no file of src/decision/** outside policy/, none of src/structure/**. */
export const checkAT1 = (graph: SourceGraph): Array<Violation> =>
  closureViolations(
    "AT1",
    graph,
    filesWhere(graph, (f) => isUnder(f, "src/mcp")),
    (f) => isDecisionPerson(f) || isUnder(f, "src/structure"),
    {}
  )

/** AT1b: the import closure of src/decision/policy/** does not hold src/decision/decide.ts. */
export const checkAT1b = (graph: SourceGraph): Array<Violation> =>
  closureViolations(
    "AT1b",
    graph,
    filesWhere(graph, (f) => isUnder(f, "src/decision/policy")),
    (f) => f === "src/decision/decide.ts",
    {}
  )

const importerViolations = (
  rule: string,
  graph: SourceGraph,
  isTarget: (f: string) => boolean,
  mayImport: (importer: string) => boolean,
  what: string
): Array<Violation> => {
  const out: Array<Violation> = []
  for (const info of graph.files.values()) {
    if (mayImport(info.path)) continue
    for (const edge of [...info.imports, ...info.dynamicImports]) {
      if (edge.target !== null && isTarget(edge.target)) {
        out.push({ rule, file: info.path, line: edge.line, message: `imports ${edge.target} (${edge.kind}); ${what}` })
      }
    }
  }
  return out
}

/** AT2: src/decision/** outside policy/ is imported only by src/http/routes/decision.ts, src/approval/** and itself. */
export const checkAT2 = (graph: SourceGraph): Array<Violation> =>
  importerViolations(
    "AT2",
    graph,
    isDecisionPerson,
    (f) => f === "src/http/routes/decision.ts" || isUnder(f, "src/approval") || isDecisionPerson(f),
    "src/decision/** outside policy/ may be imported only by src/http/routes/decision.ts and src/approval/**"
  )

/**
 * AT2c: the policy's entrances stay bounded. src/decision/policy/** is imported only by itself,
 * src/services.ts (which composes the policy behind intake's port), src/operations/retract.ts
 * (retract()) and src/approval/**; within it, adopt.ts only by live.ts (the policy intake()
 * runs, inside the proposal's transaction) and retract.ts only by src/operations/retract.ts.
 */
export const checkAT2c = (graph: SourceGraph): Array<Violation> => [
  ...importerViolations(
    "AT2c",
    graph,
    (f) => isUnder(f, "src/decision/policy"),
    (f) => isUnder(f, "src/decision/policy") || f === "src/services.ts" || f === "src/operations/retract.ts" || isUnder(f, "src/approval"),
    "src/decision/policy/** may be imported only by src/services.ts, src/operations/retract.ts and src/approval/**"
  ),
  ...importerViolations(
    "AT2c",
    graph,
    (f) => f === "src/decision/policy/adopt.ts",
    (f) => f === "src/decision/policy/live.ts",
    "adopt() runs only in the policy's verdict (src/decision/policy/live.ts), which intake() calls"
  ),
  ...importerViolations(
    "AT2c",
    graph,
    (f) => f === "src/decision/policy/retract.ts",
    (f) => f === "src/operations/retract.ts",
    "retract() is reached only through the retract operation (src/operations/retract.ts)"
  ),
  // structure (gaps.md §13): the policy's structure writer runs only in the structure policy, which
  // the structure writers reach through their port; a retract only through the retract operation
  ...importerViolations(
    "AT2c",
    graph,
    (f) => f === "src/decision/policy/adopt-structure.ts",
    (f) => f === "src/decision/policy/structure-live.ts" || f === "src/decision/policy/retract-structure.ts",
    "adoptStructure() runs only in the structure policy (src/decision/policy/structure-live.ts)"
  ),
  ...importerViolations(
    "AT2c",
    graph,
    (f) => f === "src/decision/policy/retract-structure.ts",
    (f) => f === "src/operations/retract.ts",
    "retractStructure() is reached only through the retract operation (src/operations/retract.ts)"
  ),
  ...importerViolations(
    "AT2c",
    graph,
    (f) => f === "src/graph/structure-policy.ts",
    (f) => f === "src/graph/entities.ts" || f === "src/graph/links.ts" || isUnder(f, "src/decision/policy") || f === "src/services.ts",
    "the structure policy port is called only by the structure writers (intake of entities and links)"
  )
]

/**
 * AT2d: every proposal passes intake() (the secret scan and the classification): the proposal
 * writer src/domain/proposals.ts is imported only by src/domain/intake.ts, and intake's policy
 * port src/domain/approval-policy.ts only by intake, the policy that provides it and services.ts.
 */
export const checkAT2d = (graph: SourceGraph): Array<Violation> => [
  ...importerViolations(
    "AT2d",
    graph,
    (f) => f === "src/domain/proposals.ts",
    (f) => f === "src/domain/intake.ts",
    "the proposal writer may be imported only by src/domain/intake.ts (every proposal passes intake)"
  ),
  ...importerViolations(
    "AT2d",
    graph,
    (f) => f === "src/domain/approval-policy.ts",
    (f) => f === "src/domain/intake.ts" || isUnder(f, "src/decision/policy") || f === "src/services.ts",
    "the policy port may be imported only by intake, the policy and services.ts"
  )
]

/** AT2b: src/structure/** is imported only by src/http/routes/structure.ts, src/approval/** and itself. */
export const checkAT2b = (graph: SourceGraph): Array<Violation> =>
  importerViolations(
    "AT2b",
    graph,
    (f) => isUnder(f, "src/structure"),
    (f) => f === "src/http/routes/structure.ts" || isUnder(f, "src/approval") || isUnder(f, "src/structure"),
    "src/structure/** may be imported only by src/http/routes/structure.ts and src/approval/**"
  )

/** Whitespace collapsed to single spaces (matching is case-insensitive via the regex flags). */
export const normalizeSql = (text: string): string => text.replace(/\s+/g, " ")

/** Optional schema prefix and identifier quotes around a table name. */
const table = (name: string): string =>
  String.raw`(?:[A-Za-z_]\w*\s*\.\s*)?["\`\[]?${name}["\`\]]?(?!\w)`

/** INSERT [OR x] INTO <table> and REPLACE INTO <table>. */
export const insertInto = (name: string): RegExp =>
  new RegExp(String.raw`\b(?:INSERT(?:\s+OR\s+\w+)?|REPLACE)\s+INTO\s+${table(name)}`, "i")

/** Any writing statement: INSERT/REPLACE INTO, UPDATE [OR x], DELETE FROM. */
export const writesTo = (name: string): RegExp =>
  new RegExp(String.raw`\b(?:(?:INSERT(?:\s+OR\s+\w+)?|REPLACE)\s+INTO|UPDATE(?:\s+OR\s+\w+)?|DELETE\s+FROM)\s+${table(name)}`, "i")

export const REJECTED_FTS = /(?<!\w)rejected_fts(?!\w)/i

interface StringRule {
  readonly rule: string
  readonly label: string
  readonly pattern: RegExp
  readonly allowed: (file: string) => boolean
  /** Extra condition on the matching string inside an allowed file. */
  readonly require?: { readonly file: (file: string) => boolean; readonly pattern: RegExp; readonly label: string }
}

const basename = (f: string): string => f.slice(f.lastIndexOf("/") + 1)

export const AT3_RULES: ReadonlyArray<StringRule> = [
  {
    rule: "AT3",
    label: "INSERT INTO rule_version",
    pattern: insertInto("rule_version"),
    allowed: (f) => ["src/domain/proposals.ts", "src/decision/decide.ts", "src/decision/policy/adopt.ts",
      "src/decision/policy/retract.ts"].includes(f) || isMigration(f),
    require: { file: (f) => f === "src/domain/proposals.ts", pattern: /'proposed'/, label: "the literal 'proposed'" }
  },
  {
    rule: "AT3",
    label: "INSERT INTO decision",
    pattern: insertInto("decision"),
    allowed: (f) => ["src/decision/decide.ts", "src/decision/policy/adopt.ts", "src/decision/policy/retract.ts"].includes(f)
      || isMigration(f)
  },
  {
    rule: "AT3",
    label: "rejected_fts",
    pattern: REJECTED_FTS,
    // a redaction rebuilds the rejected row of a rule whose text it replaced (gaps.md §12)
    allowed: (f) => f === "src/decision/decide.ts" || basename(f) === "rejected-similar.ts" || f === "src/redaction/derived.ts" ||
      isMigration(f)
  },
  {
    rule: "AT3",
    label: "INSERT INTO entity_version",
    pattern: insertInto("entity_version"),
    // the policy's confirm of an adopted create, and the undo of a retract (gaps.md §13)
    allowed: (f) => f === "src/graph/entities.ts" || isUnder(f, "src/structure") || isMigration(f) ||
      f === "src/decision/policy/adopt-structure.ts" || f === "src/decision/policy/retract-structure.ts"
  },
  {
    rule: "AT3",
    label: "INSERT INTO entity",
    pattern: insertInto("entity"),
    allowed: (f) => f === "src/graph/entities.ts" || isMigration(f)
  },
  {
    rule: "AT3",
    label: "INSERT INTO link",
    pattern: insertInto("link"),
    allowed: (f) => f === "src/graph/links.ts" || isMigration(f)
  },
  {
    rule: "AT3",
    label: "INSERT INTO review",
    pattern: insertInto("review"),
    // a person's review; the policy's adoption (origin auto) and a grant's retract of it (gaps.md §13)
    allowed: (f) => isUnder(f, "src/structure") || isMigration(f) ||
      f === "src/decision/policy/adopt-structure.ts" || f === "src/decision/policy/retract-structure.ts"
  }
]

export const AT5_RULES: ReadonlyArray<StringRule> = [
  {
    rule: "AT5",
    label: "a write to entity_closure",
    pattern: writesTo("entity_closure"),
    allowed: (f) => f === "src/graph/closure.ts" || isMigration(f)
  },
  {
    rule: "AT5",
    label: "a write to entity_fts",
    pattern: writesTo("entity_fts"),
    allowed: (f) => f === "src/graph/fts.ts" || isMigration(f)
  }
]

const checkStringRules = (graph: SourceGraph, rules: ReadonlyArray<StringRule>): Array<Violation> => {
  const out: Array<Violation> = []
  const seen = new Set<string>()
  for (const info of graph.files.values()) {
    for (const entry of info.strings) {
      const text = normalizeSql(entry.text)
      for (const r of rules) {
        if (!r.pattern.test(text)) continue
        let message: string | null = null
        if (!r.allowed(info.path)) {
          message = `${r.label} outside its writers: ${JSON.stringify(text.slice(0, 120))}`
        } else if (r.require !== undefined && r.require.file(info.path) && !r.require.pattern.test(text)) {
          message = `${r.label} without ${r.require.label}: ${JSON.stringify(text.slice(0, 120))}`
        }
        if (message === null) continue
        const key = `${info.path}:${entry.line}:${r.label}`
        if (seen.has(key)) continue
        seen.add(key)
        out.push({ rule: r.rule, file: info.path, line: entry.line, message })
      }
    }
  }
  return out
}

/** AT3: who may write rule_version, decision, rejected_fts and the graph tables (graph.md §13). */
export const checkAT3 = (graph: SourceGraph): Array<Violation> => checkStringRules(graph, AT3_RULES)

/** AT5: entity_closure / entity_fts are written only by src/graph/closure.ts / src/graph/fts.ts and migrations. */
export const checkAT5 = (graph: SourceGraph): Array<Violation> => checkStringRules(graph, AT5_RULES)

/** Files whose strings match `pattern` (whitespace-normalized), for "known present" assertions. */
export const filesWithString = (graph: SourceGraph, pattern: RegExp): Array<string> =>
  [...graph.files.values()]
    .filter((info) => info.strings.some((s) => pattern.test(normalizeSql(s.text))))
    .map((info) => info.path)

export const FORBIDDEN_MCP_NAME = /confirm|reject|revoke|review|decide|approve|archive|revert|redact|erase/i

/**
 * AT4: no tool or prompt name registered in src/mcp/** matches FORBIDDEN_MCP_NAME. A name that does
 * not resolve to a literal in its file falls back to every `name: "…"` literal in src/mcp/**; when
 * there is none, the computed name is itself a violation (the rule must not pass blind).
 */
export const checkAT4 = (graph: SourceGraph): Array<Violation> => {
  const out: Array<Violation> = []
  const mcp = [...graph.files.values()].filter((info) => isUnder(info.path, "src/mcp"))
  const unresolved: Array<{ file: string; reg: Registration }> = []
  for (const info of mcp) {
    for (const reg of info.registrations) {
      if (reg.names === null) {
        unresolved.push({ file: info.path, reg })
        continue
      }
      for (const name of reg.names) {
        if (FORBIDDEN_MCP_NAME.test(name)) {
          out.push({ rule: "AT4", file: info.path, line: reg.line, message: `.${reg.method}(${JSON.stringify(name)}) names a forbidden action` })
        }
      }
    }
  }
  if (unresolved.length > 0) {
    const nameLiterals = mcp.flatMap((info) => info.nameProperties.map((p) => ({ file: info.path, p })))
    for (const { file, p } of nameLiterals) {
      if (FORBIDDEN_MCP_NAME.test(p.text)) {
        out.push({ rule: "AT4", file, line: p.line, message: `name ${JSON.stringify(p.text)} (tool/prompt table) names a forbidden action` })
      }
    }
    if (nameLiterals.length === 0) {
      for (const { file, reg } of unresolved) {
        out.push({ rule: "AT4", file, line: reg.line, message: `.${reg.method}(${reg.argText}, …): name is not a string literal, AT4 cannot check it` })
      }
    }
  }
  return out
}

/** All registrations found in src/mcp/** (for "known present" assertions). */
export const mcpRegistrations = (graph: SourceGraph): Array<Registration & { readonly file: string }> =>
  [...graph.files.values()]
    .filter((info) => isUnder(info.path, "src/mcp"))
    .flatMap((info) => info.registrations.map((r) => ({ ...r, file: info.path })))

export const AT6_FORBIDDEN_DIRS: ReadonlyArray<string> = [
  "src/decision", "src/structure", "src/approval", "src/redaction", "src/mcp", "src/http", "src/auth"
]
export const AT6_FORBIDDEN_FILES: ReadonlyArray<string> = [
  "src/domain/proposals.ts", "src/domain/sources.ts", "src/graph/entities.ts", "src/graph/links.ts", "src/db/fts.ts",
  "src/operations/redactions.ts"
]

const isCliEntry = (f: string): boolean =>
  (/^src\/ops\/cli[^/]*$/.test(f) && /\.(?:[mc]?ts|tsx)$/.test(f)) || isUnder(f, "src/ops/doctor")

/**
 * What src/ops/cli.ts may load on demand: the service ("../main.js", the one way into it) and a
 * CLI module of its own folder ("./cli-*.js"), which is itself a seed of the static closure below.
 */
const CLI_DYNAMIC = /^(?:\.\.\/main\.js|\.\/cli-[a-z0-9-]+\.js)$/

/**
 * AT6: the static import closure of src/ops/cli*.ts and src/ops/doctor/** holds none of the
 * approval/decision/server modules nor the writer modules; the only dynamic import() in src/ops/**
 * is in src/ops/cli.ts: "../main.js", or a CLI module "./cli-*.js" (so a command's module loads
 * when it runs, and the service only through main.js).
 */
export const checkAT6 = (graph: SourceGraph): Array<Violation> => {
  const out = closureViolations(
    "AT6",
    graph,
    filesWhere(graph, isCliEntry),
    (f) => AT6_FORBIDDEN_DIRS.some((d) => isUnder(f, d)) || AT6_FORBIDDEN_FILES.includes(f),
    { dynamic: false }
  )
  for (const info of graph.files.values()) {
    if (!isUnder(info.path, "src/ops")) continue
    for (const d of info.dynamicImports) {
      if (info.path === "src/ops/cli.ts" && d.specifier !== null && CLI_DYNAMIC.test(d.specifier)) continue
      out.push({
        rule: "AT6",
        file: info.path,
        line: d.line,
        message: `dynamic import(${d.specifier === null ? "<computed>" : JSON.stringify(d.specifier)}); the only ones allowed in src/ops/** are "../main.js" and a CLI module "./cli-*.js" in src/ops/cli.ts`
      })
    }
  }
  return out
}

/** Approval-channel paths (gaps.md §2) other than GET /v1/export/:scope. */
export const APPROVAL_ROUTE = /^\/approval(?:[/?#]|$)|\/v1\/rules\/[^/\s]*\/decision\b|\/v1\/reviews\b|\/v1\/entities\/[^/\s]*\/archive\b|\/v1\/rejected\b|\/v1\/redactions\b/i

/**
 * AT6 (route table): src/ops/cli-routes.ts, the only way the CLI builds an HTTP request, names no
 * approval-channel route except GET /v1/export/:scope.
 */
export const checkAT6Routes = (graph: SourceGraph): Array<Violation> => {
  const info = graph.files.get("src/ops/cli-routes.ts")
  if (info === undefined) return []
  return info.strings
    .filter((s) => APPROVAL_ROUTE.test(s.text.trim()))
    .map((s) => ({
      rule: "AT6",
      file: info.path,
      line: s.line,
      message: `approval-channel route ${JSON.stringify(s.text)} in the CLI route table`
    }))
}

// ---------------------------------------------------------------------------------------------
// Redaction (gaps.md §12: AT4/AT6 extended to redact): a person's redaction by a term is reachable
// only from the approval channel. The ledger's replay of stored places (no term) runs wherever a
// scope file opens, so the rule is about the entrances that take a term, not every file of
// src/redaction/**.

/** The redaction operation, written once for the approval routes and pages. */
export const REDACTION_OPERATION = "src/operations/redactions.ts"
/** Its route file (the only route that may import it) and the pages of src/approval that may. */
export const REDACTION_ROUTE = "src/http/routes/redactions.ts"
/** The core's entrances that take a term: the preview and the apply (on its own thread, or on a connection). */
export const REDACTION_ENTRANCES: ReadonlyArray<string> = ["src/redaction/preview.ts", "src/redaction/apply.ts", "src/redaction/apply-thread.ts"]
/** Their exported names that take a term. */
const TERM_ENTRANCE_NAME = /\b(?:previewRedaction|applyRedaction|applyOnThread)\b/

/**
 * The redaction is reached only from the approval channel:
 *  - the import closure of src/mcp/**, of the ops listener and of the CLI and doctor holds no
 *    redaction operation, no redaction route and no redaction page (AT4, AT6);
 *  - the operation is imported only by its route file and src/approval/**, and no other file of
 *    src/http/routes imports src/redaction/** (no service route);
 *  - the core's term entrances (preview.ts, apply.ts, apply-thread.ts) are imported only by
 *    src/redaction/** and the operation, and their names previewRedaction / applyRedaction /
 *    applyOnThread appear nowhere else;
 *  - the route file serves the approval channel only.
 */
export const checkRedaction = (graph: SourceGraph, read: (file: string) => string): Array<Violation> => {
  const isPersonRedaction = (f: string): boolean =>
    f === REDACTION_OPERATION || f === REDACTION_ROUTE || /^src\/approval\/redactions-[a-z-]+\.ts$/.test(f)
  const out: Array<Violation> = [
    ...closureViolations("REDACT", graph, filesWhere(graph, (f) => isUnder(f, "src/mcp") || f === "src/http/ops-listener.ts"), isPersonRedaction, {}),
    // the CLI loads the service only through main.js (AT6): its static closure is what a command reaches
    ...closureViolations("REDACT", graph, filesWhere(graph, isCliEntry), isPersonRedaction, { dynamic: false })
  ]
  out.push(...importerViolations(
    "REDACT",
    graph,
    (f) => f === REDACTION_OPERATION,
    (f) => f === REDACTION_ROUTE || isUnder(f, "src/approval"),
    `${REDACTION_OPERATION} may be imported only by ${REDACTION_ROUTE} and src/approval/**`
  ))
  out.push(...importerViolations(
    "REDACT",
    graph,
    (f) => isUnder(f, "src/redaction"),
    (f) => !isUnder(f, "src/http/routes") || f === REDACTION_ROUTE,
    "no route of /v1 but the redaction route reaches src/redaction/**"
  ))
  out.push(...importerViolations(
    "REDACT",
    graph,
    (f) => REDACTION_ENTRANCES.includes(f),
    (f) => isUnder(f, "src/redaction") || f === REDACTION_OPERATION,
    `the term entrances of src/redaction/** may be imported only by src/redaction/** and ${REDACTION_OPERATION}`
  ))
  for (const info of graph.files.values()) {
    if (isUnder(info.path, "src/redaction") || info.path === REDACTION_OPERATION) continue
    const text = read(info.path)
    const m = TERM_ENTRANCE_NAME.exec(text)
    if (m !== null) {
      out.push({ rule: "REDACT", file: info.path, line: text.slice(0, m.index).split("\n").length, message: `names ${m[0]}: only ${REDACTION_OPERATION} calls a redaction by a term` })
    }
  }
  const route = graph.files.get(REDACTION_ROUTE)
  if (route !== undefined) {
    const text = read(REDACTION_ROUTE)
    for (const m of text.matchAll(/channel:\s*"([a-z]+)"|(?:operationRoute|serveRoute)\(\s*"([a-z]+)"/g)) {
      const channel = m[1] ?? m[2]
      if (channel !== "approval") {
        out.push({ rule: "REDACT", file: REDACTION_ROUTE, line: text.slice(0, m.index).split("\n").length, message: `serves the ${channel ?? "?"} channel: a redaction is the approval channel's only` })
      }
    }
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// Layers: no cycle between the top-level folders of src/ (a top-level file counts as its own node)

/** The top-level node of a file: src/<folder>/… → <folder>, src/<file>.ts → <file>. */
export const topLevel = (file: string): string => {
  const parts = file.split("/")
  return parts.length > 2 ? (parts[1] ?? file) : (parts[1] ?? file).replace(/\.ts$/, "")
}

/** Folder edges over runtime imports (static and dynamic; type-only imports left out), with one example edge each. */
export const folderEdges = (graph: SourceGraph): Map<string, Map<string, string>> => {
  const edges = new Map<string, Map<string, string>>()
  for (const f of graph.files.values()) {
    for (const e of [...f.imports, ...f.dynamicImports]) {
      if (e.typeOnly || e.target === null || !graph.files.has(e.target)) continue
      const a = topLevel(f.path)
      const b = topLevel(e.target)
      if (a === b) continue
      const out = edges.get(a) ?? new Map<string, string>()
      if (!out.has(b)) out.set(b, `${f.path}:${e.line} → ${e.target}`)
      edges.set(a, out)
    }
  }
  return edges
}

/** Strongly connected components of the folder graph with more than one folder (Tarjan). */
export const folderCycles = (graph: SourceGraph): Array<Array<string>> => {
  const edges = folderEdges(graph)
  const nodes = new Set<string>([...edges.keys(), ...[...edges.values()].flatMap((m) => [...m.keys()])])
  let index = 0
  const idx = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: Array<string> = []
  const on = new Set<string>()
  const out: Array<Array<string>> = []
  const visit = (v: string): void => {
    idx.set(v, index)
    low.set(v, index)
    index++
    stack.push(v)
    on.add(v)
    for (const w of edges.get(v)?.keys() ?? []) {
      if (!idx.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0))
      } else if (on.has(w)) low.set(v, Math.min(low.get(v) ?? 0, idx.get(w) ?? 0))
    }
    if (low.get(v) === idx.get(v)) {
      const scc: Array<string> = []
      let w: string | undefined
      do {
        w = stack.pop()
        if (w !== undefined) {
          on.delete(w)
          scc.push(w)
        }
      } while (w !== undefined && w !== v)
      if (scc.length > 1) out.push(scc.sort())
    }
  }
  for (const v of [...nodes].sort()) if (!idx.has(v)) visit(v)
  return out
}

/** LAYERS: the top-level folders of src/ import each other without a cycle. */
export const checkLayers = (graph: SourceGraph): Array<Violation> => {
  const edges = folderEdges(graph)
  return folderCycles(graph).map((scc) => {
    const example = scc.flatMap((a) => scc.filter((b) => b !== a && edges.get(a)?.has(b) === true).map((b) => edges.get(a)?.get(b) ?? ""))
    return { rule: "LAYERS", file: `src/{${scc.join(",")}}`, line: 0, message: `import cycle between ${scc.join(", ")}: ${example.join("; ")}` }
  })
}

// ---------------------------------------------------------------------------------------------
// Thin adapters: routes and tools hold no SQL and no schema of their own

const SQL_STATEMENT = /\bSELECT\b[\s\S]*\bFROM\b|\bINSERT\s+(?:OR\s+\w+\s+)?INTO\b|\bUPDATE\s+\w+\s+SET\b|\bDELETE\s+FROM\b|\bCREATE\s+(?:TABLE|INDEX|TRIGGER|VIEW|VIRTUAL)\b|\bPRAGMA\s+\w+/i
/** A constrained schema written in place (a zod schema, or an Effect primitive with its rules). */
const OWN_SCHEMA = /\bfrom\s+["']zod(?:\/[^"']*)?["']|\bz\.(?:string|number|boolean|object|strictObject|array|enum|literal)\s*\(|\bSchema\.(?:String|Number|Boolean|Literal|pattern|minLength|maxLength|between|int|filter|NumberFromString|Trim|BigInt)\b/

/** The adapter files: the /v1 routes and the MCP tools. */
export const isAdapter = (file: string): boolean => isUnder(file, "src/http/routes") || isUnder(file, "src/mcp/tools")

export const checkAdapters = (graph: SourceGraph, read: (file: string) => string): Array<Violation> => {
  const out: Array<Violation> = []
  for (const info of graph.files.values()) {
    if (!isAdapter(info.path)) continue
    for (const st of info.strings) {
      if (SQL_STATEMENT.test(st.text)) out.push({ rule: "ADAPTER", file: info.path, line: st.line, message: `SQL in an adapter: ${st.text.slice(0, 60)}` })
    }
    const text = read(info.path)
    const m = OWN_SCHEMA.exec(text)
    if (m !== null) {
      const line = text.slice(0, m.index).split("\n").length
      out.push({ rule: "ADAPTER", file: info.path, line, message: `a schema of its own (${m[0].trim()}): use the contract's request schema` })
    }
  }
  return out
}

export const ALL_CHECKS: ReadonlyArray<readonly [string, (g: SourceGraph) => Array<Violation>]> = [
  ["AT1", checkAT1], ["AT1b", checkAT1b], ["AT2", checkAT2], ["AT2b", checkAT2b], ["AT2c", checkAT2c], ["AT2d", checkAT2d], ["AT3", checkAT3],
  ["AT4", checkAT4], ["AT5", checkAT5], ["AT6", checkAT6], ["AT6-routes", checkAT6Routes], ["LAYERS", checkLayers]
]
