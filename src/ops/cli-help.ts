/**
 * The CLI's help (gaps.md §9 CLI): plain text (never ANSI escapes), at most 80 columns, one
 * example per command, on stdout for --help. @effect/cli parses the arguments; this table is what
 * a person reads, so `groundnote <command> --help` never shows the parser's built-ins (--wizard,
 * --completions, --log-level) or a bare usage line.
 */
import { nearestKey } from "../contracts/nearest.js"
import { VERSION } from "../version.js"
import { terminalSafe } from "./cli-text.js"

export interface CommandDoc {
  /** the words after `groundnote`, e.g. "backup probe" */
  readonly path: string
  readonly summary: string
  readonly usage: string
  readonly description?: string
  readonly options?: ReadonlyArray<readonly [string, string]>
  readonly example: string
}

export interface GroupDoc {
  readonly path: string
  readonly summary: string
}

const JSON_OPT = ["--json", "print only the JSON answer (or the error body) on stdout"] as const
const FOR_MODEL_OPT = ["--for-model", "the answer for an AI model: a preamble, stored text in ⟪gn:…⟫ blocks"] as const

const OPS = "Talks to the running service over <GROUNDNOTE_DATA_DIR>/ops.sock with GROUNDNOTE_OPS_TOKEN (run it as the service user, with the service's environment)."
const API = "A thin client of the service's /v1 API with GROUNDNOTE_URL and GROUNDNOTE_API_TOKEN (a service bearer) or GROUNDNOTE_API_ACCESS_JWT (a person's Access token), or the credentials file of groundnote config init. The request is checked with the service's own schema before it is sent."

export const GROUPS: ReadonlyArray<GroupDoc> = [
  { path: "config", summary: "the CLI's credentials file (config show, path, init)" },
  { path: "scope", summary: "scope files (scope create)" },
  { path: "grants", summary: "who may read, propose, decide or redact in which scopes" },
  { path: "key", summary: "age keys of encrypted copies (key create, list, add-recipient, rotate)" },
  { path: "backup", summary: "backup run, probe, verify and nightly" },
  { path: "sources", summary: "store and read back sources (sources put, get)" },
  { path: "rules", summary: "read rules (rules list, get, versions, provenance)" },
  { path: "proposals", summary: "open proposals (proposals list)" },
  { path: "approvals", summary: "what waits for a person (approvals open, digest)" }
]

export const COMMANDS: ReadonlyArray<CommandDoc> = [
  {
    path: "version", summary: "print the version of this build",
    usage: "groundnote version [--json]", description: "Prints the bare version on stdout (with --json: {\"version\": …}).",
    options: [JSON_OPT], example: "groundnote version"
  },
  {
    path: "serve", summary: "run the service",
    usage: "groundnote serve [--demo] [--json]",
    description: "Runs the service with GROUNDNOTE_* from the environment and groundnote.json (docs/operator.md). A refusal to start prints groundnote: <code>: <message> on stderr and exits 1.",
    options: [
      ["--demo", "seed and use a demo data dir (GROUNDNOTE_DATA_DIR, default ./demo-data) for a first look"],
      ["--json", "accepted (--json everywhere); stdout is always JSON log lines, a start refusal's included"]
    ],
    example: "groundnote serve --demo"
  },
  {
    path: "config show", summary: "where the api and export credentials come from (never the secrets)",
    usage: "groundnote config show [--json]",
    description: "Names the source (the environment or the credentials file), the URL and which credentials are set. Secrets are never printed.",
    options: [JSON_OPT], example: "groundnote config show"
  },
  {
    path: "config path", summary: "print the path of the credentials file",
    usage: "groundnote config path [--json]",
    description: "Prints $XDG_CONFIG_HOME/groundnote/cli.json (default ~/.config/groundnote/cli.json) on stdout (with --json: {\"path\": …}).",
    options: [JSON_OPT], example: "groundnote config path"
  },
  {
    path: "config init", summary: "write the credentials file once, the secrets read from stdin",
    usage: "groundnote config init --url <url> --credential token|api-access-jwt|access-jwt ... [--json]",
    description: "Reads one secret per --credential from stdin (one line each, in the order given; on a terminal it asks without echo) and writes the credentials file with mode 0600. It never overwrites the file: remove it to write new credentials. token and api-access-jwt exclude each other. The URL must be https (http only for a loopback host).",
    options: [
      ["--url <url>", "the service's address, e.g. https://groundnote.example.com"],
      ["--credential <kind>", "token (a service bearer), api-access-jwt (a person's Access token for the API) or access-jwt (for export); repeat for more"],
      ["--json", "print only {written, url, credentials} (never a secret), or the error body, on stdout"]
    ],
    example: "printf '%s\\n' \"$TOKEN\" | groundnote config init --url https://groundnote.example.com --credential token"
  },
  {
    path: "status", summary: "the service, its backup and every configured scope",
    usage: "groundnote status [--json]", description: OPS, options: [JSON_OPT], example: "groundnote status"
  },
  {
    path: "scope create", summary: "create the file of a scope listed in groundnote.json",
    usage: "groundnote scope create <name> [--json]", description: OPS, options: [JSON_OPT], example: "groundnote scope create sales"
  },
  {
    path: "grants list", summary: "every grant, active and disabled (never a token)",
    usage: "groundnote grants list [--json]", description: OPS, options: [JSON_OPT], example: "groundnote grants list"
  },
  {
    path: "grants create", summary: "create a grant; a bearer grant's token is printed once on stdout",
    usage: "groundnote grants create --kind person|service --auth email|access-service|bearer [--identity <x>] --scope <s> ... (--right read|propose|decide|redact ... | --rights <r>,<r>,...) [--label <l>] [--json]",
    description: `A person uses --auth email --identity <e-mail>; a service --auth access-service --identity <Access common name>, or --auth bearer without identity (the service makes the token and shows it this once). Only persons hold decide and redact; decide does not imply redact. ${OPS}`,
    options: [
      ["--kind <kind>", "person or service"],
      ["--auth <auth>", "email (person), access-service or bearer (service)"],
      ["--identity <x>", "the e-mail or Access common name; none for bearer"],
      ["--scope <s>", "a configured scope; repeat for more"],
      ["--right <r>", "read, propose, decide or redact; repeat for more"],
      ["--rights <list>", "the rights as one comma list, e.g. read,decide,redact"],
      ["--label <l>", "a name for people"],
      JSON_OPT
    ],
    example: "groundnote grants create --kind service --auth bearer --scope sales --right read --right propose --label feeder"
  },
  {
    path: "grants disable", summary: "disable a grant for good",
    usage: "groundnote grants disable <id> [--json]", description: OPS, options: [JSON_OPT], example: "groundnote grants disable service:3"
  },
  {
    path: "grants rename", summary: "give a grant a new label (the row is disabled and copied)",
    usage: "groundnote grants rename <id> --label <l> [--json]", description: OPS,
    options: [["--label <l>", "the new label"], JSON_OPT], example: "groundnote grants rename service:3 --label \"feeder (mail)\""
  },
  {
    path: "key create", summary: "make an age key pair: the identity to a file, the recipient to the service",
    usage: "groundnote key create --scope <s> | --instance --out <file> [--label <l>] [--json]",
    description: `From then on every copy the service writes of the scope (--instance: of ops.sqlite) is encrypted to its recipients. The identity goes only to --out (mode 0600, never over an existing file; only its path is printed): keep it off this host, and put a copy in GROUNDNOTE_KEY_DIR where probe, verify and restore run. ${OPS}`,
    options: [
      ["--scope <s>", "the scope whose copies it encrypts"],
      ["--instance", "the instance's key instead: the copies of ops.sqlite"],
      ["--out <file>", "the new identity file"],
      ["--label <l>", "a name for people"],
      JSON_OPT
    ],
    example: "groundnote key create --scope sales --out /media/usb/sales.age-identity"
  },
  {
    path: "key list", summary: "every recipient of encrypted copies, active and retired",
    usage: "groundnote key list [--json]", description: OPS, options: [JSON_OPT], example: "groundnote key list"
  },
  {
    path: "key add-recipient", summary: "encrypt every new copy also to someone's age recipient",
    usage: "groundnote key add-recipient --scope <s> | --instance --recipient <age1…> [--label <l>] [--json]",
    description: `The recipient is an X25519 age public key (age1…, as age-keygen -y prints it). ${OPS}`,
    options: [
      ["--scope <s>", "the scope"],
      ["--instance", "the instance's copies (ops.sqlite) instead"],
      ["--recipient <age1…>", "the public key"],
      ["--label <l>", "a name for people"],
      JSON_OPT
    ],
    example: "groundnote key add-recipient --scope sales --recipient age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p"
  },
  {
    path: "key rotate", summary: "a new key pair; the recipients key create made before are retired",
    usage: "groundnote key rotate --scope <s> | --instance --out <file> [--label <l>] [--json]",
    description: `New copies are encrypted to the new recipient (and to the added ones); copies made before stay readable with the old identity only: keep it until they are gone. ${OPS}`,
    options: [
      ["--scope <s>", "the scope"],
      ["--instance", "the instance's key instead"],
      ["--out <file>", "the new identity file"],
      ["--label <l>", "a name for people"],
      JSON_OPT
    ],
    example: "groundnote key rotate --scope sales --out /media/usb/sales-2027.age-identity"
  },
  {
    path: "backup run", summary: "copy ops.sqlite and every scope into backup.directory",
    usage: "groundnote backup run [--json]",
    description: `Kind copy: a consistent copy of every file, never over a better one; kind litestream: nothing to copy. Exits 3 when a file failed. ${OPS}`,
    options: [JSON_OPT], example: "groundnote backup run"
  },
  {
    path: "backup probe", summary: "restore the newest backup into a throw-away directory and prove it",
    usage: "groundnote backup probe [--scope <s>] [--json]",
    description: `The restore drill: integrity, counts, export hashes against live; writes the nightly export when backup.export_directory is set. Exits 3 when a check failed. ${OPS}`,
    options: [["--scope <s>", "only this scope (default: every created scope)"], JSON_OPT], example: "groundnote backup probe --scope sales"
  },
  {
    path: "backup verify", summary: "check live and the newest backup of each scope",
    usage: "groundnote backup verify [--scope <s>] [--json]",
    description: `The probe's checks without the export, plus checks of the live file. Exits 3 when a check failed. ${OPS}`,
    options: [["--scope <s>", "only this scope (default: every created scope)"], JSON_OPT], example: "groundnote backup verify"
  },
  {
    path: "backup nightly", summary: "backup run, then probe, then the dead-man ping",
    usage: "groundnote backup nightly [--json]",
    description: `What the nightly timer runs (docs/backup.md). The ping (a GET to backup.deadman_url of groundnote.json) is sent only when run and probe passed; null skips it. Exits 0 when all passed, 3 otherwise. ${OPS}`,
    options: [JSON_OPT], example: "groundnote backup nightly"
  },
  {
    path: "backup litestream-config", summary: "print the litestream.yml of the data dir (kind litestream)",
    usage: "groundnote backup litestream-config [--json]",
    description: "Every file (ops.sqlite, every configured scope) with its replica under backup.target and backup.prefix; a keyed file with age recipients from ops.sqlite, never an identity. Runs without the service. Print it again after a new scope or key and restart Litestream (docs/backup.md).",
    options: [JSON_OPT], example: "groundnote backup litestream-config > /etc/litestream.yml"
  },
  {
    path: "restore", summary: "restore a scope (or ops.sqlite) from the newest backup to a new file",
    usage: "groundnote restore --to <path> --scope <s> | --ops [--from copy|litestream] [--json]",
    description: "Runs without the service. Refuses the live files, anything in <data dir>/scopes/ and an existing target; fetches, checks and only then links the file to the target. Exits 3 when a check failed (nothing is written). Then stop the service and move the file in (docs/backup.md).",
    options: [
      ["--to <path>", "the new file; its directory must exist"],
      ["--scope <s>", "the scope to restore"],
      ["--ops", "restore ops.sqlite instead (when the data dir is lost)"],
      ["--from <kind>", "copy or litestream (default: backup.kind)"],
      JSON_OPT
    ],
    example: "groundnote restore --to /var/tmp/gn-restore/sales.sqlite --scope sales"
  },
  {
    path: "doctor", summary: "say what is wrong and how to fix it",
    usage: "groundnote doctor [--json]",
    description: "Every finding with ok, warn, fail or skip and its fix, grouped. Works with the service down (the findings that need it say skip). Run it with the service's environment. Exits 3 when a finding fails.",
    options: [JSON_OPT], example: "groundnote doctor"
  },
  {
    path: "export", summary: "download a scope's Markdown export (.tar.gz)",
    usage: "groundnote export <scope> [--out <file>] [--json]",
    description: "Needs a person's Access token for the approval application with decide on the scope: GROUNDNOTE_URL and GROUNDNOTE_ACCESS_JWT, or access_jwt in the credentials file. Never overwrites a file.",
    options: [["--out <file>", "where to write it (default: the service's file name in the working directory)"], JSON_OPT],
    example: "groundnote export sales --out sales-export.tar.gz"
  },
  {
    path: "sources put", summary: "store a source (a meeting transcript or a mail)",
    usage: "groundnote sources put --body <file> [--json] [--for-model]", description: API,
    options: [["--body <file>", "the SourceRequest as JSON (docs/api.md); - reads stdin"], JSON_OPT, FOR_MODEL_OPT],
    example: "groundnote sources put --body mail.json"
  },
  {
    path: "sources get", summary: "read back a source this grant stored",
    usage: "groundnote sources get <id> --scope <s> [--include text,attachments] [--json] [--for-model]", description: API,
    options: [["--scope <s>", "the source's scope"], ["--include <list>", "text and/or attachments, comma-separated"], JSON_OPT, FOR_MODEL_OPT],
    example: "groundnote sources get 'mail:<order-rule@example.com>' --scope sales --include text"
  },
  {
    path: "search", summary: "search rules",
    usage: "groundnote search (--text <t> | --term <w> ... | --body <file>) --scope <s> ... [options] [--json] [--for-model]", description: API,
    options: [
      ["--text <t>", "the question or a text to find rules for"],
      ["--term <w>", "a search term; repeat for more"],
      ["--scope <s>", "a scope; repeat for more (with --cross-scope)"],
      ["--cross-scope", "allow more than one scope"],
      ["--as-of <day>", "the rules in force on that day (YYYY-MM-DD)"],
      ["--include-proposals", "also unconfirmed proposals"],
      ["--limit <n>", "at most n bundles (1-50, default 10)"],
      ["--relation <k:n>", "customer:<name>, product:<name> or supplier:<name>"],
      ["--entity <id>", "only rules linked to this entity or below it"],
      ["--body <file>", "the whole SearchRequest as JSON instead; - reads stdin"],
      JSON_OPT,
      FOR_MODEL_OPT
    ],
    example: "groundnote search --scope sales --text \"payment terms for Müller GmbH\""
  },
  {
    path: "rules list", summary: "the rules of a scope, a page at a time",
    usage: "groundnote rules list --scope <s> [--status proposed|confirmed|superseded] [--relation <k:n>] [--limit <n>] [--after <rule-id>] [--json] [--for-model]",
    description: API,
    options: [["--scope <s>", "the scope"], ["--status <s>", "only this status"], ["--relation <k:n>", "only rules with this relation"], ["--limit <n>", "1-200 (default 100)"], ["--after <id>", "the next page after this rule id"], JSON_OPT, FOR_MODEL_OPT],
    example: "groundnote rules list --scope sales --status confirmed"
  },
  {
    path: "rules get", summary: "one rule as a bundle",
    usage: "groundnote rules get <rule-id> [--as-of <day>] [--include-proposals] [--json] [--for-model]", description: API,
    options: [["--as-of <day>", "the version in force on that day"], ["--include-proposals", "read a rule that is still a proposal"], JSON_OPT, FOR_MODEL_OPT],
    example: "groundnote rules get sales-0001"
  },
  {
    path: "rules versions", summary: "every version and decision of a rule",
    usage: "groundnote rules versions <rule-id> [--json] [--for-model]", description: API, options: [JSON_OPT, FOR_MODEL_OPT], example: "groundnote rules versions sales-0001"
  },
  {
    path: "rules provenance", summary: "where a rule comes from (source, quote, decisions)",
    usage: "groundnote rules provenance <rule-id> [--json] [--for-model]", description: API, options: [JSON_OPT, FOR_MODEL_OPT], example: "groundnote rules provenance sales-0001"
  },
  {
    path: "retract", summary: "take back an automatic adoption (the rule is superseded from today)",
    usage: "groundnote retract <rule-id> --reason <text> [--json] [--for-model]", description: API,
    options: [["--reason <text>", "why the adoption is taken back (required)"], JSON_OPT, FOR_MODEL_OPT],
    example: "groundnote retract sales-0007 --reason \"the mail was a draft\""
  },
  {
    path: "proposals list", summary: "open proposals of a scope",
    usage: "groundnote proposals list --scope <s> [--limit <n>] [--after <rule-id>] [--json] [--for-model]", description: API,
    options: [["--scope <s>", "the scope"], ["--limit <n>", "1-200 (default 100)"], ["--after <id>", "the next page after this rule id"], JSON_OPT, FOR_MODEL_OPT],
    example: "groundnote proposals list --scope sales"
  },
  {
    path: "propose", summary: "propose a rule with its verbatim quote",
    usage: "groundnote propose --body <file> [--json] [--for-model]", description: `${API} A person confirms it on the approval pages.`,
    options: [["--body <file>", "the proposal as JSON, the body of POST /v1/proposals (docs/api.md); - reads stdin"], JSON_OPT, FOR_MODEL_OPT],
    example: "groundnote propose --body proposal.json"
  },
  {
    path: "feedback", summary: "tell the service which bundles of a search helped",
    usage: "groundnote feedback <search-id> [--relevant <ref>] ... [--irrelevant <ref>] ... [--missing <ref>] ... [--json]",
    description: API,
    options: [["--relevant <ref>", "a bundle's rule/<id>@<n> that helped; repeat"], ["--irrelevant <ref>", "one that did not; repeat"], ["--missing <ref>", "a rule the search should have found; repeat"], JSON_OPT],
    example: "groundnote feedback 3f1c2a9e-4b7d-4c1e-9a2f-1d2e3f4a5b6c --relevant rule/sales-0001@1"
  },
  {
    path: "approvals open", summary: "print the number of items waiting for a person",
    usage: "groundnote approvals open [--scope <s>] [--json]",
    description: `Open rule proposals plus pending structure changes in the grant's scopes; the bare number on stdout. ${API}`,
    options: [["--scope <s>", "only this scope"], JSON_OPT],
    example: "groundnote approvals open"
  },
  {
    path: "approvals digest", summary: "what the policy adopted, what waits, what is due for recheck",
    usage: "groundnote approvals digest --since <day> [--json]",
    description: `Per configured scope: the rules the approval policy adopted since the day (in the instance's zone), the rule proposals and structure changes waiting for a person, and the confirmed rules due for recheck, oldest first; on stdout, for a timer that mails it. ${OPS}`,
    options: [["--since <day>", "the first day, YYYY-MM-DD"], JSON_OPT],
    example: "groundnote approvals digest --since 2026-03-01"
  }
]

const WIDTH = 80

/** Words wrapped to lines of at most `width` characters, every line after the first prefixed by `indent`. */
export const wrap = (text: string, width: number, indent = ""): string => {
  const lines: Array<string> = []
  let line = ""
  for (const word of text.split(/\s+/).filter((w) => w !== "")) {
    const candidate = line === "" ? word : `${line} ${word}`
    if (candidate.length > width && line !== "") {
      lines.push(line)
      line = word
    } else {
      line = candidate
    }
  }
  if (line !== "") lines.push(line)
  return lines.map((l, i) => (i === 0 ? l : `${indent}${l}`)).join("\n")
}

/** Two columns: the left padded to the widest (at most 24), the right wrapped beside it. */
const columns = (rows: ReadonlyArray<readonly [string, string]>, lead = "  "): Array<string> => {
  const left = Math.min(24, Math.max(...rows.map(([l]) => l.length)))
  return rows.map(([l, r]) => {
    const pad = `${lead}${" ".repeat(left + 2)}`
    if (l.length > left) return `${lead}${l}\n${pad}${wrap(r, WIDTH, pad)}`
    return `${lead}${l.padEnd(left + 2)}${wrap(r, WIDTH - lead.length - left - 2, pad)}`
  })
}

const EXIT_CODES = "Exit codes: 0 ok, 1 error (its code on stderr), 2 usage, 3 a check failed."

export const commandHelp = (doc: CommandDoc): string => {
  const parts = [
    wrap(`groundnote ${doc.path}: ${doc.summary}`, WIDTH, "  "),
    "",
    `Usage: ${wrap(doc.usage, WIDTH - 9, "         ")}`
  ]
  if (doc.description !== undefined) parts.push("", wrap(doc.description, WIDTH))
  if (doc.options !== undefined && doc.options.length > 0) parts.push("", "Options:", ...columns(doc.options))
  parts.push("", "Example:", `  ${doc.example}`, "", EXIT_CODES)
  return parts.join("\n")
}

export const groupHelp = (group: GroupDoc): string => {
  const subs = COMMANDS.filter((c) => c.path.startsWith(`${group.path} `))
  return [
    `groundnote ${group.path}: ${group.summary}`,
    "",
    "Commands:",
    ...columns(subs.map((c) => [c.path, c.summary])),
    "",
    `Run groundnote ${group.path} <command> --help for its options and an example.`
  ].join("\n")
}

const SECTIONS: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
  ["Service", ["serve", "version"]],
  ["Operator (ops socket: GROUNDNOTE_DATA_DIR, GROUNDNOTE_OPS_TOKEN)", [
    "status", "scope create", "grants list", "grants create", "grants disable", "grants rename",
    "key create", "key list", "key add-recipient", "key rotate",
    "backup run", "backup probe", "backup verify", "backup nightly", "restore", "doctor", "approvals digest"
  ]],
  ["Litestream (no service: groundnote.json and ops.sqlite)", ["backup litestream-config"]],
  ["API (GROUNDNOTE_URL and a credential, or groundnote config init)", [
    "sources put", "sources get", "search", "rules list", "rules get", "rules versions", "rules provenance",
    "proposals list", "propose", "feedback", "retract", "approvals open", "export"
  ]],
  ["The CLI's credentials", ["config show", "config path", "config init"]]
]

export const rootHelp = (): string => {
  const parts = [
    `groundnote ${VERSION}: keeps a company's business rules with their evidence`,
    "",
    "Usage: groundnote <command> [options]",
    "       (in a checkout: npx groundnote <command>)"
  ]
  for (const [title, paths] of SECTIONS) {
    parts.push("", `${title}:`, ...columns(paths.map((p) => [p, COMMANDS.find((c) => c.path === p)?.summary ?? ""])))
  }
  parts.push(
    "",
    "Every command takes --help (what it does, its options, an example) and --json (only the JSON answer on stdout). Full reference: docs/cli.md.",
    "",
    EXIT_CODES
  )
  return parts.map((p) => (p.length > WIDTH && !p.startsWith(" ") ? wrap(p, WIDTH) : p)).join("\n")
}

export type HelpRequest =
  | { readonly kind: "none" }
  | { readonly kind: "help"; readonly text: string }
  | { readonly kind: "usage"; readonly text: string; readonly message: string | null }

const HELP_FLAGS = new Set(["--help", "-h"])

/** The words of argv (options and their values aside: an option's value is a word too). */
export const wordsOf = (args: ReadonlyArray<string>): Array<string> => args.filter((a) => !a.startsWith("-"))

/** The command its first two words name, else its first word, else none. */
export const commandNamed = (words: ReadonlyArray<string>): CommandDoc | undefined =>
  [2, 1].map((n) => COMMANDS.find((c) => c.path === words.slice(0, n).join(" "))).find((c) => c !== undefined)

/** A word of argv as a message shows it: at most 40 characters, terminal-safe. */
export const shownWord = (word: string): string => terminalSafe(word.length > 40 ? `${word.slice(0, 40)}…` : word)

/** A word that is neither an option nor the value of one of `valued`. */
const strayArgument = (args: ReadonlyArray<string>, valued: ReadonlyArray<string>): boolean => {
  for (let i = 0; i < args.length; i++) {
    const a = args[i] ?? ""
    if (valued.includes(a)) i++
    else if (!a.startsWith("-")) return true
  }
  return false
}

/**
 * What argv asks for before the parser sees it: --help of a command or group (stdout, exit 0), a
 * bare group or no command at all (its help on stderr, exit 2), --wizard (not an option, exit 2).
 */
export const helpRequest = (args: ReadonlyArray<string>): HelpRequest => {
  const end = args.indexOf("--")
  const head = end < 0 ? args : args.slice(0, end)
  if (head.includes("--wizard")) return { kind: "usage", text: "", message: "--wizard is not an option of groundnote" }
  if (head[0] === "config" && head[1] === "init" && strayArgument(head.slice(2), ["--url", "--credential"])) {
    // a secret given as an argument is never echoed (the parser would quote it)
    return { kind: "usage", text: "", message: "config init takes no arguments: the secrets come from stdin, one line per --credential (never from argv)" }
  }
  const words = wordsOf(head)
  const command = commandNamed(words)
  const group = GROUPS.find((g) => g.path === words[0])
  if (head.some((a) => HELP_FLAGS.has(a))) {
    if (command !== undefined) return { kind: "help", text: commandHelp(command) }
    if (group !== undefined) return { kind: "help", text: groupHelp(group) }
    if (words.length === 0) return { kind: "help", text: rootHelp() }
    return { kind: "usage", text: rootHelp(), message: `unknown command: ${words[0] ?? ""}` }
  }
  if (args.length === 0) return { kind: "usage", text: rootHelp(), message: null }
  if (group !== undefined && command === undefined && words.length === 1 && head.length === 1) {
    return { kind: "usage", text: groupHelp(group), message: null }
  }
  // a command that does not exist: the parser's own message lists the root's commands even for a
  // group's ("grants lst"), so it is named here with the nearest command and its list
  if (command === undefined && words[0] !== undefined && head[0] === words[0]) {
    if (group === undefined) return { kind: "usage", text: rootHelp(), message: unknownCommand(words[0], TOP_WORDS, "") }
    const second = words[1]
    if (second !== undefined && head[1] === second) {
      const own = COMMANDS.filter((c) => c.path.startsWith(`${group.path} `)).map((c) => c.path.slice(group.path.length + 1))
      return { kind: "usage", text: groupHelp(group), message: unknownCommand(second, own, `${group.path} `) }
    }
  }
  return { kind: "none" }
}

/** The first word of every command and group (what may follow `groundnote`). */
const TOP_WORDS: ReadonlyArray<string> = [...new Set([...COMMANDS, ...GROUPS].map((c) => c.path.split(" ")[0] ?? c.path))]

/** "unknown command: grants lst (did you mean grants list?)": the word as given, cut to 40 characters, terminal-safe. */
const unknownCommand = (word: string, known: ReadonlyArray<string>, prefix: string): string => {
  const near = nearestKey(word, known)
  return `unknown command: ${prefix}${shownWord(word)}${near === null ? "" : ` (did you mean ${prefix}${near}?)`}`
}
