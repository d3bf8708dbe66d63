/**
 * The secret scan (architecture.md invariant 12, gaps.md §10): pure, no I/O.
 *
 * scanSecrets looks at named text fields (statement, quote, keywords, speaker, source text,
 * segments, attachment names …) and returns one hit per secret found: the field, the kind and
 * where it lies in the field's text. A hit never holds the secret: the caller, who has the text
 * anyway, passes the matched slice to secretFingerprint (a salted HMAC for the audit row), or
 * calls secretFindings, which does both. A message built from hits (secretMessage) names fields
 * and kinds only.
 *
 * What counts as a secret:
 *  - keys and tokens by their documented prefix and shape (AWS, GitHub, GitLab, Slack, Stripe,
 *    Google, OpenAI, Anthropic, Azure, npm, SendGrid, Twilio and other vendors), Groundnote bearer
 *    tokens (gn_ + 43 base64url), JWTs, `Bearer <token>` and `Basic <user:pass>`;
 *  - private keys (PEM, OpenSSH, PGP, PuTTY, age);
 *  - connection strings with credentials (`scheme://user:pass@host`, `Server=…;Password=…`);
 *  - passwords and PINs after a label (`password=…`, `Passwort: …`, `Kennwort …`, `PIN: …`,
 *    `das Passwort ist …`) when the value looks like one (letters with digits or symbols, or a
 *    digit PIN), never a placeholder (`****`, `${VAR}`, `<password>`) or an ordinary word;
 *  - high-entropy values after a secret-like label (token, secret, api key, key, Schlüssel …);
 *  - a random value within a few words of a secret word, whatever separates them (`aws secret key
 *    wJalr…`, `API token for the shop -> …`, `… ist der API-Schlüssel.`); ordinary nouns (key
 *    account, Schlüsselkunde, Token-Bucket), ids and hashes named as such stay quiet.
 *
 * Speed: every pattern is linear (bounded quantifiers, no nested unbounded repetition), each a
 * single pass over the text; bench/secrets.ts prints the figure for a 5 MB source.
 */
import { createHmac } from "node:crypto"

/** The kinds of secret the scan names (closed). */
export const SECRET_KINDS = [
  "private-key",
  "aws-access-key",
  "aws-secret-key",
  "github-token",
  "gitlab-token",
  "slack-token",
  "stripe-key",
  "google-api-key",
  "openai-key",
  "anthropic-key",
  "azure-key",
  "npm-token",
  "sendgrid-key",
  "twilio-key",
  "api-key",
  "groundnote-token",
  "jwt",
  "bearer-token",
  "connection-string",
  "password",
  "high-entropy"
] as const
export type SecretKind = (typeof SECRET_KINDS)[number]

/** One named text a proposal or a source brings (e.g. `statement`, `source.quote`, `segments[3].text`). */
export interface SecretField {
  readonly field: string
  readonly text: string
}

/**
 * One secret found: the field, the kind, and its place in the field's text as UTF-16 offsets
 * (`text.slice(start, end)` is the secret; only secretFingerprint should ever see that slice).
 */
export interface SecretHit {
  readonly field: string
  readonly kind: SecretKind
  readonly start: number
  readonly end: number
}

/** What the audit row (secret_finding) records: field, kind and a salted hash, never the text. */
export interface SecretFinding {
  readonly field: string
  readonly kind: SecretKind
  readonly fingerprint: string
}

// ---------------------------------------------------------------------------------------------
// Value checks

const LETTER = /\p{L}/u
const DIGIT = /\p{N}/u
/** A symbol: neither letter, digit, space nor the hyphen/apostrophe of ordinary words. */
const SYMBOL = /[^\p{L}\p{N}\s'’-]/u
const UUID_RE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/

/** Shannon entropy in bits per character. */
export const shannonEntropy = (s: string): number => {
  if (s.length === 0) return 0
  const counts = new Map<string, number>()
  for (const c of s) counts.set(c, (counts.get(c) ?? 0) + 1)
  const n = [...s].length
  let h = 0
  for (const k of counts.values()) {
    const p = k / n
    h -= p * Math.log2(p)
  }
  return h
}

/** A value that stands for a secret instead of being one: masked, a variable, a template. */
const PLACEHOLDER_RE = new RegExp(
  [
    "^[*•●xX#.?_-]+$", // masked
    "^\\$\\{[^}]*\\}$", "^\\$[A-Z_][A-Z0-9_]*$", "^%[A-Za-z_][A-Za-z0-9_]*%$", // variables
    "^\\{\\{[^}]*\\}\\}$", "^<[^>]*>$", "^\\[[^\\]]*\\]$", // templates
    "^(?:env|vault|secret|op|awssm|keychain):", "^https?://", // references
    "^(?:password|passwort|kennwort|secret|changeme|redacted|hidden|none|null|undefined|empty|example|your[-_]?\\w*)$"
  ].join("|"),
  "i"
)

/** Strips quotes and brackets around a value and sentence punctuation after it. */
const trimValue = (v: string): { value: string; lead: number } => {
  const lead = /^[([{"'„“‚‘`]*/.exec(v)?.[0].length ?? 0
  const rest = v.slice(lead)
  const tail = /[)\]}"'“”‘’`.,;:!?]*$/.exec(rest)?.[0].length ?? 0
  return { value: rest.slice(0, rest.length - tail), lead }
}

type LabelKind = "password" | "pin" | "secret" | "weak"

/** A password after a password label: letters with digits or symbols, or (PIN, password) digits only. */
const passwordLike = (v: string, label: LabelKind): boolean => {
  if (v.length < 4 || v.length > 256 || PLACEHOLDER_RE.test(v)) return false
  if (/^\p{N}+$/u.test(v)) return v.length <= 12
  if (label === "pin") return false
  return LETTER.test(v) && (DIGIT.test(v) || SYMBOL.test(v))
}

/** A secret-looking value after a secret label: long, random, letters and digits. */
const highEntropy = (v: string, label: LabelKind): boolean => {
  if (v.length < 16 || v.length > 512 || PLACEHOLDER_RE.test(v)) return false
  if (!/^[A-Za-z0-9+/=_.~-]+$/.test(v)) return false
  if (!/[A-Za-z]/.test(v) || !/[0-9]/.test(v)) return false
  if (UUID_RE.test(v)) return label === "secret"
  return shannonEntropy(v) >= (label === "secret" ? 3.3 : 3.5)
}

// ---------------------------------------------------------------------------------------------
// Labels

const PASSWORD_CORES = new Set([
  "password", "passwort", "passwd", "pwd", "pw", "pass", "kennwort", "passphrase", "passcode",
  "geheimzahl", "zugangscode", "türcode", "tuercode", "alarmcode", "tresorcode", "accesscode", "doorcode"
])
const PIN_CORES = new Set(["pin", "pincode"])
const STRONG_SECRET_CORES = new Set([
  "secret", "token", "apikey", "apitoken", "accesstoken", "authtoken", "accesskey", "clientsecret", "privatekey",
  "secretkey", "signingkey", "webhooksecret", "licensekey", "licencekey", "productkey", "activationkey", "lizenzschlüssel",
  "produktschlüssel", "aktivierungsschlüssel", "zugangsschlüssel", "zugangstoken", "apischlüssel"
])
/** Weak labels: only with `:`/`=` right after them, never in prose ("the key is …"). */
const WEAK_SECRET_CORES = new Set(["key", "schlüssel", "schluessel", "auth", "sig", "signature"])
const WEAK_PASSWORD_CORES = new Set(["pw", "pass", "pwd"])

/** Identifier parts after a label that make it metadata, not a secret (`password_policy`, `token_type`). */
const META_PARTS = new Set([
  "id", "ids", "name", "type", "length", "len", "policy", "policies", "expiry", "expires", "expiration", "rotation",
  "hint", "hints", "owner", "alias", "url", "uri", "file", "path", "version", "date", "format", "count", "reset",
  "manager", "field", "prompt", "rules", "rule", "strength", "min", "max", "age", "required", "changed", "change",
  "richtlinie", "richtlinien", "ablauf", "länge", "hinweis", "änderung", "wechsel", "regel", "regeln", "vergessen",
  "nummer", "nr", "typ", "art", "frist", "datum", "size", "usage", "holder", "inhaber", "übergabe", "ausgabe",
  "verwaltung", "schrank", "kasten", "box", "dienst", "recovery", "protected", "geschützt", "secured"
])
/** Identifier parts before a label that make it no secret (`public_key`, `primary key`). */
const PUBLIC_PARTS = new Set(["public", "pub", "primary", "foreign", "sort", "partition", "idempotency", "cache", "lookup", "row", "composite", "unique"])

const CORES = [
  "passwort", "password", "passwd", "passphrase", "passcode", "pass", "pwd", "pw", "kennwort", "geheimzahl",
  "zugangscode", "t(?:ü|ue)rcode", "alarmcode", "tresorcode", "access[ _]?code", "door[ _]?code", "pin(?:[ -]?code)?",
  "client[ _]?secret", "webhook[ _]?secret", "secret[ _]?key", "secret", "api[ _]?token", "access[ _]?token",
  "auth[ _]?token", "zugangstoken", "token", "api[ _]?key", "access[ _]?key", "private[ _]?key", "signing[ _]?key",
  "licen[sc]e[ _]?key", "product[ _]?key", "activation[ _]?key", "lizenzschl(?:ü|ue)ssel", "produktschl(?:ü|ue)ssel",
  "aktivierungsschl(?:ü|ue)ssel", "zugangsschl(?:ü|ue)ssel", "schl(?:ü|ue)ssel", "key", "auth", "signature", "sig"
].join("|")

/** Finds a core word; the full label pattern runs only there (one cheap pass over the text). */
const CORE_RE = new RegExp(CORES, "gi")

/**
 * At a core: the identifier parts after it (`_KEY`, `-Reset`), the separator — `:`/`=`/`=>`, or a
 * short prose gap and `is`/`ist`/`lautet`, or a short gap and `:` — and the value. Every
 * repetition is bounded, so one attempt costs a constant and the scan stays linear.
 */
const TAIL_RE = new RegExp(
  `(${CORES})` + // 1: core
    "((?:[_.\\-][\\p{L}\\p{N}]{1,24}){0,4})" + // 2: identifier parts after the core
    "(?![\\p{L}\\p{N}])[\"']?" +
    "(" + // 3: the separator
    "[^\\S\\n]{0,3}(?::=|=>|=|:)(?!//)" +
    "|[^\\S\\n]+(?:[^\\n.,;:=!?\"()]{0,40}?[^\\S\\n])??(?:is|ist|lautet|lauten|heißt|heisst|was|war|are|sind)(?![\\p{L}\\p{N}])" +
    "|[^\\S\\n]+[^\\n.,;:=!?\"()]{1,40}?(?::|=)" +
    ")" +
    "[^\\S\\n]{0,3}[\"'„“‚‘`]?" +
    "([^\\s\"“”„‚‘’`<>,;]{1,512})", // 4: the value (quotes and brackets trimmed in code)
  "iuy"
)

const IDENT_CHAR = /[\p{L}\p{N}]/u
const PART_SEP = /[_.-]/
const ALNUM_ASCII = /[A-Za-z0-9]/

/**
 * The identifier parts before a core at `at` (`DB_`, `x-api-`): at most 4 parts of 1–24 ASCII
 * letters or digits, each followed by `_`, `.` or `-`. Null when the core sits inside a word
 * (`Kundenschlüssel`) or a longer identifier.
 */
const prefixBefore = (text: string, at: number): Array<string> | null => {
  const parts: Array<string> = []
  let i = at
  for (;;) {
    const c = text[i - 1]
    if (c === undefined || !(IDENT_CHAR.test(c) || PART_SEP.test(c) || c === "/")) return parts.reverse()
    if (!PART_SEP.test(c) || parts.length === 4) return null
    let j = i - 1
    while (j > 0 && ALNUM_ASCII.test(text[j - 1] ?? "") && i - 1 - j < 24) j--
    const part = text.slice(j, i - 1)
    if (part.length === 0) return null
    parts.push(part)
    i = j
  }
}

const norm = (s: string): string => s.toLowerCase().replace(/[ _.-]/g, "").replace("ue", "ü")

/** What a label asks of its value; the identifier part right before the core counts (`API-Key` is strong, `Key` weak). */
const labelKind = (core: string, lastBefore: string): { kind: LabelKind; weak: boolean } => {
  const c = norm(core)
  if (PIN_CORES.has(c)) return { kind: "pin", weak: false }
  if (PASSWORD_CORES.has(c)) return { kind: "password", weak: WEAK_PASSWORD_CORES.has(c) }
  if (STRONG_SECRET_CORES.has(c) || STRONG_SECRET_CORES.has(norm(lastBefore) + c)) return { kind: "secret", weak: false }
  return { kind: "weak", weak: WEAK_SECRET_CORES.has(c) }
}

// ---------------------------------------------------------------------------------------------
// Detectors

interface Found {
  readonly kind: SecretKind
  readonly start: number
  readonly end: number
}

type Detector = (text: string) => Array<Found>

/** Every match of a global regex; the secret is capture group `group` (0: the whole match). */
const byPattern = (
  kind: SecretKind,
  re: RegExp,
  options: { readonly group?: number; readonly accept?: (m: RegExpExecArray, text: string) => boolean } = {},
  /** the secret starts this many characters before the match (a pattern found by its suffix) */
  shift = 0
): Detector => {
  if (!re.global || !re.hasIndices) throw new Error("a detector pattern needs the flags g and d")
  const group = options.group ?? 0
  return (text) => {
    const out: Array<Found> = []
    re.lastIndex = 0
    for (let m = re.exec(text); m !== null; m = re.exec(text)) {
      if (m[0].length === 0) re.lastIndex++
      const span = m.indices?.[group]
      if (span === undefined) continue
      if (options.accept !== undefined && !options.accept(m, text)) continue
      out.push({ kind, start: span[0] + shift, end: span[1] })
    }
    return out
  }
}

/** `scheme://user:password@host`: found at "://", the scheme checked backwards, the rest forwards. */
const CREDENTIAL_URL_RE = /:\/\/([^\s:@/?#"'<>]{0,256}):([^\s@/?#"'<>]{1,256})@[A-Za-z0-9[]/dy
function credentialUrls(text: string): Array<Found> {
  const out: Array<Found> = []
  for (let at = text.indexOf("://"); at !== -1; at = text.indexOf("://", at + 3)) {
    let j = at
    while (j > 0 && at - j < 31 && /[A-Za-z0-9+.-]/.test(text[j - 1] ?? "")) j--
    if (at - j < 2 || !/[A-Za-z]/.test(text[j] ?? "") || /[A-Za-z0-9+.-]/.test(text[j - 1] ?? "")) continue
    CREDENTIAL_URL_RE.lastIndex = at
    const m = CREDENTIAL_URL_RE.exec(text)
    const span = m?.indices?.[2]
    if (m === null || span === undefined) continue
    const pass = decodeURIComponentSafe(m[2] ?? "")
    if (pass.length > 0 && !PLACEHOLDER_RE.test(pass)) out.push({ kind: "connection-string", start: span[0], end: span[1] })
  }
  return out
}

/** Not inside a longer token: the character before is none of these. */
const B = "(?<![A-Za-z0-9_])"
/** Not followed by more token characters. */
const E = "(?![A-Za-z0-9_\\-])"

const hasMixedCase = (s: string): boolean => /[a-z]/.test(s) && /[A-Z]/.test(s) && /[0-9]/.test(s)

/** PEM / OpenSSH / PGP private key blocks (header up to the END line when there is one), PuTTY, age. */
const privateKeys: Detector = (text) => {
  const out: Array<Found> = []
  const re = /-----BEGIN[ A-Z0-9]{0,30}PRIVATE KEY(?: BLOCK)?-----/g
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    // the END line within 100,000 characters (a bounded window, so many headers stay linear)
    const window = text.slice(re.lastIndex, re.lastIndex + 100_000)
    const e = /-----END[ A-Z0-9]{0,30}PRIVATE KEY(?: BLOCK)?-----/.exec(window)
    const end = e === null ? Math.min(text.length, re.lastIndex + 4096) : re.lastIndex + e.index + e[0].length
    out.push({ kind: "private-key", start: m.index, end })
    re.lastIndex = end
  }
  const other = /PuTTY-User-Key-File-[23]: [^\n]{1,80}|AGE-SECRET-KEY-1[0-9A-Z]{58}/dg
  return [...out, ...byPattern("private-key", other)(text)]
}

const DETECTORS: ReadonlyArray<Detector> = [
  privateKeys,
  byPattern("aws-access-key", new RegExp(`${B}(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA|APKA)[A-Z0-9]{16}${E}`, "dg")),
  byPattern("github-token", new RegExp(`${B}(?:gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9_]{60,255})${E}`, "dg")),
  byPattern("gitlab-token", new RegExp(`${B}(?:glpat|gldt|glptt|glrt|gloas|glcbt)-[A-Za-z0-9_-]{20,64}${E}`, "dg")),
  byPattern("slack-token", new RegExp(`${B}(?:xox[abposre]-[A-Za-z0-9-]{10,250}|xapp-\\d-[A-Z0-9]{8,}-\\d{6,}-[a-f0-9]{32,})${E}`, "dg")),
  byPattern("slack-token", /https:\/\/hooks\.slack\.com\/(?:services|workflows)\/T[A-Z0-9]{6,12}\/[A-Z0-9]{6,12}\/[A-Za-z0-9]{20,40}/dg),
  byPattern("stripe-key", new RegExp(`${B}(?:(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,247}|whsec_[A-Za-z0-9]{32,64})${E}`, "dg")),
  byPattern("google-api-key", new RegExp(`${B}(?:AIza[0-9A-Za-z_-]{35}|GOCSPX-[A-Za-z0-9_-]{28}|ya29\\.[0-9A-Za-z_-]{30,})${E}`, "dg")),
  byPattern("anthropic-key", new RegExp(`${B}sk-ant-[a-z]{3,6}\\d{2}-[A-Za-z0-9_-]{40,200}${E}`, "dg")),
  byPattern("openai-key", new RegExp(`${B}sk-(?:(?:proj|svcacct|admin)-)?[A-Za-z0-9_-]{32,200}${E}`, "dg"), {
    accept: (m) => !m[0].startsWith("sk-ant-") && hasMixedCase(m[0])
  }),
  byPattern("azure-key", /(?<![A-Za-z])(?:AccountKey|SharedAccessKey|SharedAccessSignature|PrimaryKey|SecondaryKey)[^\S\n]*=[^\S\n]*([A-Za-z0-9+/]{30,120}={0,2})/dgi, { group: 1 }),
  byPattern("azure-key", /[?&]sig=([A-Za-z0-9%+/]{30,200}(?:%3D|=){0,2})/dg, {
    group: 1,
    accept: (m, text) => /[?&]s[vp]=/.test(text.slice(Math.max(0, m.index - 400), m.index + 400))
  }),
  byPattern("azure-key", new RegExp(`(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.-]{3}\\dQ~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])`, "dg")),
  byPattern("npm-token", new RegExp(`${B}npm_[A-Za-z0-9]{36}${E}`, "dg")),
  byPattern("sendgrid-key", new RegExp(`${B}SG\\.[A-Za-z0-9_-]{22}\\.[A-Za-z0-9_-]{43}${E}`, "dg")),
  byPattern("twilio-key", new RegExp(`${B}SK[0-9a-f]{32}${E}`, "dg")),
  byPattern("api-key", new RegExp(
    `${B}(?:key-[0-9a-f]{32}|shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}|hf_[A-Za-z]{34}|pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}` +
      `|dckr_pat_[A-Za-z0-9_-]{27}|do[por]_v1_[a-f0-9]{64}|ATATT3[A-Za-z0-9_=-]{60,}|PMAK-[a-f0-9]{24}-[a-f0-9]{34}` +
      `|lin_api_[A-Za-z0-9]{40}|ntn_[A-Za-z0-9]{46}|secret_[A-Za-z0-9]{43}|hvs\\.[A-Za-z0-9_-]{90,}|dapi[a-f0-9]{32}` +
      `|sq0(?:atp|csp)-[A-Za-z0-9_-]{22,43}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}` +
      `|NRAK-[A-Z0-9]{27}|sntrys_[A-Za-z0-9+/=_-]{50,}|dp\\.(?:pt|st|sa|ct)\\.[A-Za-z0-9]{40,44}` +
      `|rubygems_[a-f0-9]{48}|pscale_(?:tkn|pw)_[A-Za-z0-9_.-]{32,64}|figd_[A-Za-z0-9_-]{40})${E}`,
    "dg"
  )),
  // Mailchimp: 32 hex digits, -us and the data centre (found at "-us", the hex checked backwards)
  byPattern("api-key", /-us\d{1,2}(?![A-Za-z0-9_-])/dg, {
    accept: (m, text) => /^[0-9a-f]{32}$/.test(text.slice(m.index - 32, m.index)) && !/[A-Za-z0-9_]/.test(text[m.index - 33] ?? "")
  }, -32),
  byPattern("api-key", /(?<![0-9])\d{8,10}:AA[0-9A-Za-z_-]{33}(?![0-9A-Za-z_-])/dg),
  byPattern("groundnote-token", new RegExp(`${B}gn_[A-Za-z0-9_-]{43}${E}`, "dg")),
  byPattern("jwt", new RegExp(`${B}eyJ[A-Za-z0-9_-]{10,4096}\\.[A-Za-z0-9_-]{10,8192}\\.[A-Za-z0-9_-]{8,1024}${E}`, "dg")),
  // scheme://user:password@host
  credentialUrls,
  // ADO.NET / ODBC: Server=…;…;Password=…
  byPattern("connection-string", /(?<![A-Za-z])(?:Password|Pwd)[^\S\n]*=[^\S\n]*([^;\s"']{1,256})/dgi, {
    group: 1,
    accept: (m, text) => {
      const before = text.slice(Math.max(0, m.index - 400), m.index)
      const line = before.slice(before.lastIndexOf("\n") + 1)
      return /(?:^|[;"'\s])(?:Server|Data Source|Host|Initial Catalog|Database|User ID|UID|DSN|Address)[^\S\n]*=/i.test(line) &&
        !PLACEHOLDER_RE.test((m[1] ?? "").replace(/[.,:!?]+$/, ""))
    }
  }),
  // AWS secret access key: 40 base64 characters after its label, also with nothing but spaces between
  byPattern("aws-secret-key", /(?<![A-Za-z0-9])(?:aws[_ .-]?)?secret[_ .-]?(?:access[_ .-]?)?key["']?(?:[^\S\n]{0,3}(?::=|=>|=|:|[^\S\n]is|[^\S\n]ist|[^\S\n]lautet)[^\S\n]{0,3}|[^\S\n]{1,3})["']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])/dgi, {
    group: 1,
    accept: (m) => shannonEntropy(m[1] ?? "") >= 3.5
  }),
  byPattern("bearer-token", /(?<![A-Za-z])Bearer[^\S\n]+([A-Za-z0-9._~+/-]{20,2048}=*)/dgi, {
    group: 1,
    accept: (m) => {
      const v = m[1] ?? ""
      return /[A-Za-z]/.test(v) && /[0-9]/.test(v) && shannonEntropy(v) >= 3.3
    }
  }),
  byPattern("password", /(?<![A-Za-z])Basic[^\S\n]+([A-Za-z0-9+/]{8,512}={0,2})(?![A-Za-z0-9+/=])/dg, {
    group: 1,
    accept: (m) => {
      const v = m[1] ?? ""
      if (v.length % 4 !== 0) return false
      const decoded = Buffer.from(v, "base64").toString("latin1")
      const colon = decoded.indexOf(":")
      return colon > 0 && colon < decoded.length - 1 && /^[\x20-\x7e]+$/.test(decoded)
    }
  }),
  labelled,
  nearby
]

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s)
  } catch {
    return s
  }
}

/** Passwords, PINs and high-entropy values after a label. */
function labelled(text: string): Array<Found> {
  const out: Array<Found> = []
  CORE_RE.lastIndex = 0
  for (let c = CORE_RE.exec(text); c !== null; c = CORE_RE.exec(text)) {
    // inside a compound ("Passwortrichtlinie") or a longer identifier: no label
    if (IDENT_CHAR.test(text[c.index + c[0].length] ?? "")) continue
    const beforeParts = prefixBefore(text, c.index)
    if (beforeParts === null) continue
    TAIL_RE.lastIndex = c.index
    const m = TAIL_RE.exec(text)
    if (m === null) continue
    const [, core = "", after = "", sep = "", raw = ""] = m
    const lower = beforeParts.map((p) => p.toLowerCase())
    const label = labelKind(core, lower[lower.length - 1] ?? "")
    const prose = !/^[^\S\n]*(?::=|=>|=|:)$/.test(sep)
    // "Pass" alone is a passport or a pass; only an identifier part makes it a password (`DB_PASS`, `smtp.pass`)
    if (norm(core) === "pass" && lower.length === 0) continue
    // prose ("the key is …", "Passwort für das Portal: …") only after a strong label without a suffix ("Token-Bucket")
    if (prose && (label.weak || after.length > 0)) continue
    // "<label> <words>: value" only for passwords ("Passwort für das Portal: …"); "Token-Liste UUID: …" is no secret
    if (prose && /[:=]$/.test(sep) && label.kind !== "password" && label.kind !== "pin") continue
    const afterParts = after.toLowerCase().split(/[_.-]/).filter((p) => p.length > 0)
    if (lower.some((p) => PUBLIC_PARTS.has(p)) || afterParts.some((p) => META_PARTS.has(p))) continue
    if (PLACEHOLDER_RE.test(raw.replace(/[.,;:!?"'“”‘’]+$/, ""))) continue
    const { value, lead } = trimValue(raw)
    const ok = label.kind === "password" || label.kind === "pin" ? passwordLike(value, label.kind) : highEntropy(value, label.kind)
    if (!ok) continue
    const start = m.index + m[0].length - raw.length + lead
    out.push({ kind: label.kind === "password" || label.kind === "pin" ? "password" : "high-entropy", start, end: start + value.length })
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// A random value near a secret word

/** Secret words too ambiguous to label a value they do not touch ("auth", "signature", a "pass"). */
const NEARBY_IGNORED = new Set(["auth", "sig", "signature", "pass", "pw"])
/** A word right after the secret word that makes it part of an ordinary noun ("key account", "token system"). */
const NOT_A_LABEL_AFTER = new Set([
  ...META_PARTS, "account", "accounts", "card", "cards", "fingerprint", "user", "users", "figure", "figures", "fact", "facts",
  "point", "points", "dates", "question", "questions", "issue", "issues", "customer", "customers", "kunde", "kunden",
  "partner", "partners", "player", "players", "role", "roles", "lifetime", "system", "systems", "ring", "santa", "sid",
  "takeaways", "metrics", "result", "results", "area", "areas", "driver", "drivers", "stakeholder", "stakeholders",
  "success", "feature", "features", "message", "messages", "findings", "person", "personen", "moment", "frage", "fragen",
  "rolle", "position", "positionen", "kennzahlen", "faktor", "faktoren", "bund", "brett", "dienst", "wort", "word", "words"
])
/** Words that name the next value as something else: an id, a number, a hash. */
const ID_WORDS = new Set([
  "id", "ids", "uuid", "guid", "commit", "hash", "checksum", "prüfsumme", "sha", "sha1", "sha256", "sha-1", "sha-256", "md5",
  "nr", "no", "nummer", "number", "order", "bestellung", "auftrag", "rechnung", "invoice", "ticket", "tracking", "charge",
  "serial", "seriennummer", "sn", "ref", "referenz", "reference", "version", "build", "revision", "rev", "sku", "ean",
  "lieferschein", "sendung", "shipment", "iban", "bic", "kundennummer", "artikelnummer", "request", "fingerprint"
])
/** Words after which only the next value is the secret ("the key is …", "Schlüssel lautet …"). */
const CONNECTORS = new Set(["is", "ist", "lautet", "lauten", "heißt", "heisst", "was", "war", "are", "sind"])
/** The blob of an OpenSSH public key (ssh-ed25519, ssh-rsa, ecdsa): public, not a secret. */
const SSH_PUBLIC_BLOB = /^AAAA(?:B3NzaC1|C3NzaC1|E2VjZHNh)/

/**
 * A value that looks random: 16–512 characters of base64/base64url, letters with digits, no
 * UUID, no placeholder, no public key, no word in it (`Lagerplatz-A-07-3`), entropy ≥ 3.5 bits.
 */
const randomToken = (v: string): boolean => {
  if (v.length < 16 || v.length > 512 || !/^[A-Za-z0-9+/=_~-]+$/.test(v)) return false
  if (!/[A-Za-z]/.test(v) || !/[0-9]/.test(v) || UUID_RE.test(v) || PLACEHOLDER_RE.test(v) || SSH_PUBLIC_BLOB.test(v)) return false
  if (v.split(/[-_]/).some((part) => /^[A-Z]?[a-z]{4,}$/.test(part))) return false
  return shannonEntropy(v) >= 3.5
}

interface Chunk {
  readonly start: number
  readonly end: number
  /** line breaks in the whitespace between this chunk and the one it was reached from */
  readonly breaks: number
}

const isSpace = (ch: string | undefined): boolean => {
  if (ch === undefined) return false
  const code = ch.charCodeAt(0)
  return code === 32 || (code >= 9 && code <= 13) || (code > 127 && /\s/.test(ch))
}

/** The next whitespace-free run after `at` (at most 600 characters and 20 of whitespace before it). */
const chunkAfter = (text: string, at: number): Chunk | null => {
  let i = at
  let breaks = 0
  while (i < text.length && i - at < 20 && isSpace(text[i])) if (text[i++] === "\n") breaks++
  if (i >= text.length || isSpace(text[i])) return null
  const start = i
  while (i < text.length && i - start < 600 && !isSpace(text[i])) i++
  return { start, end: i, breaks }
}

/** The whitespace-free run before `at`, bounded like chunkAfter. */
const chunkBefore = (text: string, at: number): Chunk | null => {
  let i = at
  let breaks = 0
  while (i > 0 && at - i < 20 && isSpace(text[i - 1])) if (text[--i] === "\n") breaks++
  if (i <= 0 || isSpace(text[i - 1])) return null
  const end = i
  while (i > 0 && end - i < 600 && !isSpace(text[i - 1])) i--
  return { start: i, end, breaks }
}

/** A chunk as a word: lower case, without the quotes, brackets and punctuation around it. */
const wordOf = (chunk: string): string => chunk.toLowerCase().replace(/^[([{"'„“‚‘`]+|[)\]}"'“”‘’`.,;:!?]+$/g, "")
const endsSentence = (chunk: string): boolean => /[.!?;]["'“”‘’)\]]*$/.test(chunk)
const endsLabel = (chunk: string): boolean => /(?::|=|=>|->|→)["'“”‘’]?$/.test(chunk)
/** Only punctuation: a dash, an arrow, a bracket. */
const punctuationOnly = (chunk: string): boolean => !/[\p{L}\p{N}]/u.test(chunk)

/** The random value of a chunk as a found secret, or null. */
const tokenIn = (text: string, c: Chunk): Found | null => {
  if (c.end - c.start < 16) return null
  const { value, lead } = trimValue(text.slice(c.start, c.end))
  return randomToken(value) ? { kind: "high-entropy", start: c.start + lead, end: c.start + lead + value.length } : null
}

const OWN_SEPARATOR = /["']?[^\S\n]{0,3}(?::=|=>|=|:)/y
const CLOSED_LABEL = /\S{0,16}?[.!?;)\]}"'“”‘’]/y
const CLAUSE_END = /["'“”‘’]{0,4}[.,;!?)\]]|[^\S\n]{0,16}(?:\n|$)/y

/** A token no word is: an identifier with an underscore, or a long run of letters with no space. */
const OTHER_VALUE = /^[\p{L}\p{N}+/=.-]*_[\p{L}\p{N}_+/=.-]*$|^[\p{L}\p{N}_+/=-]{25,}$/u

/** At most this many words between a secret word and the value it labels ("is" and an adverb after it not counted). */
const NEARBY_WORDS = 4

/**
 * After a secret word: the first random value within NEARBY_WORDS words, in the same sentence,
 * across at most one blank line, before the next secret word (`limit`). A `:`/`=` after a word
 * makes the next value the last one looked at, "is"/"ist"/"lautet" the next one or the one after
 * an adverb ("is now …"); an id word ("commit", "Nr.") or another value with digits ends the
 * search.
 */
const valueAfter = (text: string, at: number, limit: number): Found | null => {
  let words = 0
  /** free: any words; connector: a value or an adverb next ("is now …"); last: only a value next */
  let state: "free" | "connector" | "last" = "free"
  for (let c = chunkAfter(text, at); c !== null && c.breaks <= 2 && c.start < limit; c = chunkAfter(text, c.end)) {
    const chunk = text.slice(c.start, c.end)
    const found = tokenIn(text, c)
    if (found !== null) return found
    // a value that is not random (an order number, another kind of key, one another pattern
    // names: hf_…) is the one the word labels; nothing after it is
    if (state === "last" || endsSentence(chunk) || DIGIT.test(chunk) || OTHER_VALUE.test(trimValue(chunk).value)) return null
    const word = wordOf(chunk)
    if (state === "connector") {
      if (!/^\p{L}{1,10}$/u.test(word)) return null
      state = "last"
      continue
    }
    if (endsLabel(chunk)) state = "last"
    if (punctuationOnly(chunk)) continue
    if (CONNECTORS.has(word)) {
      if (state === "free") state = "connector"
      continue
    }
    if (ID_WORDS.has(word) || ++words > NEARBY_WORDS) return null
  }
  return null
}

/** Words that may stand between a value and the secret word after it ("… is the password."). */
const BEFORE_WORDS = new Set([
  ...CONNECTORS, "the", "der", "die", "das", "den", "dem", "our", "unser", "unsere", "unseren", "my", "mein", "meine", "your",
  "ihr", "ihre", "dein", "deine", "new", "neu", "neue", "neuer", "neues", "als", "as"
])

/**
 * Before a secret word that ends its clause ("… (AWS secret key)", "… ist der API-Schlüssel."):
 * a random value with at most 3 words between, each "is"/"ist", an article, a possessive, "new"
 * or an acronym (AWS, API), on the same line and in the same clause (no comma between).
 */
const valueBefore = (text: string, at: number, floor: number): Found | null => {
  let words = 0
  for (let c = chunkBefore(text, at); c !== null && c.breaks === 0 && c.start >= floor; c = chunkBefore(text, c.start)) {
    const chunk = text.slice(c.start, c.end)
    if (endsSentence(chunk) || endsLabel(chunk) || /,["'“”‘’)\]]*$/.test(chunk)) return null
    const found = tokenIn(text, c)
    if (found !== null) return found
    if (punctuationOnly(chunk)) continue
    const word = wordOf(chunk)
    if (!(BEFORE_WORDS.has(word) || /^[A-Z]{2,6}$/.test(trimValue(chunk).value)) || ++words > 3) return null
  }
  return null
}

/**
 * A random value near a secret word (key, secret, token, password, Passwort, Schlüssel, Kennwort
 * …), whatever separates them: `aws secret key wJalr…`, `API token for the shop -> …`,
 * `… ist der API-Schlüssel.`. Not a secret word: one inside a compound (Schlüsselkunde), with an
 * identifier part (Token-Bucket), after public/primary, or before a noun it qualifies (key
 * account, key figures).
 */
function nearby(text: string): Array<Found> {
  const out: Array<Found> = []
  const cores = new RegExp(CORES, "gi")
  /** The next secret word that stands alone (not inside a compound like "Schlüsselkunde" or "Shipping"). */
  const nextWord = (): { start: number; end: number; core: string; parts: ReadonlyArray<string> } | null => {
    for (let c = cores.exec(text); c !== null; c = cores.exec(text)) {
      const end = c.index + c[0].length
      if (IDENT_CHAR.test(text[end] ?? "")) continue
      const parts = prefixBefore(text, c.index)
      if (parts === null) continue
      return { start: c.index - parts.reduce((n, p) => n + p.length + 1, 0), end, core: c[0], parts }
    }
    return null
  }
  let floor = 0
  for (let word = nextWord(), following = nextWord(); word !== null; floor = word.end, word = following, following = nextWord()) {
    const { start, end, parts } = word
    // another secret word ends the search: it labels what follows it itself
    const limit = following?.start ?? text.length
    // an identifier part after the word ("Token-Bucket", "password_policy") makes it no label
    if (PART_SEP.test(text[end] ?? "") && IDENT_CHAR.test(text[end + 1] ?? "")) continue
    const core = norm(word.core)
    if (NEARBY_IGNORED.has(core) || parts.some((p) => PUBLIC_PARTS.has(p.toLowerCase()))) continue
    // "public key", "primary key" (a bare key only: a "primary API key" is a secret)
    if (parts.length === 0 && WEAK_SECRET_CORES.has(core)) {
      const previous = chunkBefore(text, start)
      if (previous !== null && previous.breaks === 0 && PUBLIC_PARTS.has(wordOf(text.slice(previous.start, previous.end)))) continue
    }
    // `Token: …`, `key = …`: the label's own value is the next one, also on the next line
    OWN_SEPARATOR.lastIndex = end
    const own = OWN_SEPARATOR.exec(text)
    if (own !== null) {
      const c = chunkAfter(text, end + own[0].length)
      const found = c === null || c.breaks > 2 || c.start >= limit ? null : tokenIn(text, c)
      if (found !== null) out.push(found)
      continue
    }
    if (text.startsWith("-----", end) || text.startsWith(" BLOCK-----", end)) continue // a PEM line ("-----END PRIVATE KEY-----")
    const next = chunkAfter(text, end)
    if (next !== null && next.breaks === 0 && next.end - next.start <= 24 && NOT_A_LABEL_AFTER.has(wordOf(text.slice(next.start, next.end)))) continue
    // the rest of the word's own run: a bracket, a quote or a sentence end closes the label
    CLOSED_LABEL.lastIndex = end
    if (!CLOSED_LABEL.test(text)) {
      const after = valueAfter(text, end, limit)
      if (after !== null) {
        out.push(after)
        continue
      }
    }
    // the word ends its clause: the value may stand before it
    CLAUSE_END.lastIndex = end
    if (CLAUSE_END.test(text)) {
      const before = valueBefore(text, start, floor)
      if (before !== null) out.push(before)
    }
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// The scan

/** Whether f overlaps one of the spans, which are disjoint and sorted by start (so by end too). */
const overlapsAny = (spans: ReadonlyArray<Found>, f: Found): boolean => {
  let lo = 0
  let hi = spans.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if ((spans[mid]?.end ?? 0) <= f.start) lo = mid + 1
    else hi = mid
  }
  const first = spans[lo]
  return first !== undefined && first.start < f.end
}

/** Two span lists sorted by start, merged into one. */
const mergeByStart = (a: ReadonlyArray<Found>, b: ReadonlyArray<Found>): Array<Found> => {
  const out: Array<Found> = []
  let i = 0
  let j = 0
  while (i < a.length || j < b.length) {
    const x = a[i]
    const y = b[j]
    if (y === undefined || (x !== undefined && x.start <= y.start)) {
      if (x !== undefined) out.push(x)
      i++
    } else {
      out.push(y)
      j++
    }
  }
  return out
}

/**
 * Every secret in the fields, in field order and then by position. Where two detectors find
 * overlapping text, the earlier (more specific) one wins, so a GitHub token after `token=` is
 * one github-token, not also a high-entropy value.
 */
export const scanSecrets = (fields: ReadonlyArray<SecretField>): ReadonlyArray<SecretHit> => {
  const hits: Array<SecretHit> = []
  for (const { field, text } of fields) {
    if (text.length === 0) continue
    let taken: Array<Found> = []
    for (const detect of DETECTORS) {
      const found = detect(text).filter((f) => f.end > f.start).sort((a, b) => a.start - b.start)
      if (found.length === 0) continue
      const added: Array<Found> = []
      for (const f of found) {
        const last = added[added.length - 1]
        if ((last !== undefined && f.start < last.end) || overlapsAny(taken, f)) continue
        added.push(f)
      }
      taken = mergeByStart(taken, added)
    }
    for (const t of taken) hits.push({ field, kind: t.kind, start: t.start, end: t.end })
  }
  return hits
}

/** The salted hash of a matched secret for the audit row: HMAC-SHA256(salt, text), lowercase hex. */
export const secretFingerprint = (salt: string | Uint8Array, matchedText: string): string =>
  createHmac("sha256", salt).update(matchedText, "utf8").digest("hex")

/** scanSecrets plus the fingerprint of each hit: what a secret_finding row records. */
export const secretFindings = (fields: ReadonlyArray<SecretField>, salt: string | Uint8Array): ReadonlyArray<SecretFinding> => {
  const out: Array<SecretFinding> = []
  for (const { field, text } of fields) {
    for (const hit of scanSecrets([{ field, text }])) {
      out.push({ field, kind: hit.kind, fingerprint: secretFingerprint(salt, text.slice(hit.start, hit.end)) })
    }
  }
  return out
}

/**
 * The refusal text for hits: each field with the kinds found in it, never the secret, e.g.
 * "a secret was found and nothing was stored: statement (github-token), source.quote (password).
 * Remove the secret from these fields and send again".
 */
export const secretMessage = (hits: ReadonlyArray<Pick<SecretHit, "field" | "kind">>): string => {
  const byField = new Map<string, Set<SecretKind>>()
  for (const h of hits) byField.set(h.field, (byField.get(h.field) ?? new Set()).add(h.kind))
  const parts = [...byField].map(([field, kinds]) => `${field} (${[...kinds].join(", ")})`)
  return `a secret was found and nothing was stored: ${parts.join("; ")}. Remove the secret from ${byField.size === 1 ? "this field" : "these fields"} and send again`
}
