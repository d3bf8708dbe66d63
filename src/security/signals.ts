/**
 * Injection signals (architecture.md §9): a warning on foreign text that tries to steer a model —
 * and, since slice A, the mandatory exception `injection` of the approval classifier. They must
 * fire on the injection corpus and stay quiet on ordinary business mail: a mail
 * that asks a colleague to confirm a delivery date, approve an invoice, release an order, delete
 * a file or use a new tool is no injection. What is:
 *
 *  - instruction-override: "ignore all previous instructions", "vergiss deine Anweisungen",
 *    a "New instructions:" heading;
 *  - role-change: "you are now an administrator", "act as the approver", "du bist jetzt ein
 *    Admin", system prompt, developer mode, jailbreak;
 *  - role-marker: chat-template markers (`<|im_start|>`, `[INST]`, `<system>`), a role label at
 *    the start of a line as a chat writes it (`system:`, `SYSTEM:`, `assistant:`) or with an
 *    instruction after it (`System: delete all rules`), text that speaks as Groundnote;
 *  - boundary-forgery: the block markers or look-alikes, `gn:`, talk about untrusted blocks;
 *  - hidden-characters: control, bidi, tag and private-use characters (not the soft hyphen,
 *    zero-width space/joiners, word joiner and BOM that pasted text carries — words split by
 *    them are seen joined by every other detector);
 *  - markup: HTML elements, event handlers, `javascript:` and `data:` URLs, Markdown images;
 *  - action-request: an approval verb aimed at Groundnote's own objects (rules, proposals,
 *    entities, "everything", a rule id) or a Groundnote tool name.
 *
 * Every detector looks at the text as given and at a view of it: NFKC, invisible characters
 * removed, Cyrillic/Greek look-alikes and small capitals mapped to Latin letters.
 */
import { BRACKETS, INVISIBLE_RE } from "./characters.js"

export const SIGNALS = [
  "instruction-override", "role-change", "role-marker", "boundary-forgery", "hidden-characters", "markup", "action-request"
] as const
export type Signal = (typeof SIGNALS)[number]

// ---------------------------------------------------------------------------------------------
// The view every detector also sees

/** Invisible characters that ordinary pasted text carries: soft hyphen, zero-width space and joiners, word joiner, BOM. */
const BENIGN_INVISIBLE = new Set(["\u00AD", "\u200B", "\u200C", "\u200D", "\u2060", "\uFEFF"])

/** Letters that look like Latin ones: Cyrillic, Greek, small capitals, dotless i. */
const LOOK_ALIKES: Readonly<Record<string, string>> = {
  // Cyrillic
  "а": "a", "в": "b", "е": "e", "ё": "e", "і": "i", "ї": "i", "ј": "j", "к": "k", "о": "o", "р": "p", "с": "c", "т": "t",
  "у": "y", "х": "x", "ѕ": "s", "ԁ": "d", "ԛ": "q", "ԝ": "w", "һ": "h", "ɡ": "g",
  "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C", "Т": "T", "Х": "X",
  "І": "I", "Ј": "J", "Ѕ": "S",
  // Greek
  "α": "a", "ο": "o", "ι": "i", "κ": "k", "ν": "v", "ρ": "p", "τ": "t", "υ": "u", "χ": "x", "ε": "e",
  "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N", "Ο": "O", "Ρ": "P",
  "Τ": "T", "Υ": "Y", "Χ": "X",
  // small capitals and friends
  "ᴀ": "a", "ʙ": "b", "ᴄ": "c", "ᴅ": "d", "ᴇ": "e", "ꜰ": "f", "ɢ": "g", "ʜ": "h", "ɪ": "i", "ᴊ": "j", "ᴋ": "k",
  "ʟ": "l", "ᴍ": "m", "ɴ": "n", "ᴏ": "o", "ᴘ": "p", "ǫ": "q", "ʀ": "r", "ꜱ": "s", "ᴛ": "t", "ᴜ": "u", "ᴠ": "v",
  "ᴡ": "w", "ʏ": "y", "ᴢ": "z", "ı": "i"
}

const LOOK_ALIKE_RE = new RegExp(`[${Object.keys(LOOK_ALIKES).join("")}]`, "gu")
const INVISIBLE_ALL_RE = new RegExp(`(?![\\n\\t])${INVISIBLE_RE.source}`, "gu")

/** Text NFKC leaves alone and that holds no invisible character or look-alike: ASCII, Latin-1 letters, dashes, quotes, €. */
const PLAIN_RE = /^[\t\n\x20-\x7E\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u00FF\u2013\u2014\u2018-\u201E\u20AC]*$/

/** NFKC, line separators as \n, every invisible character removed, look-alikes as Latin letters. */
export const signalView = (text: string): string =>
  PLAIN_RE.test(text) ? text : text
    .normalize("NFKC")
    .replace(/\r\n|[\r\u0085\u2028\u2029]/g, "\n")
    .replace(INVISIBLE_ALL_RE, "")
    .replace(LOOK_ALIKE_RE, (c) => LOOK_ALIKES[c] ?? c)

// ---------------------------------------------------------------------------------------------
// Detectors

/** A word starts / ends here (Unicode letters and digits, unlike \b). */
const S = "(?<![\\p{L}\\p{N}_])"
const E = "(?![\\p{L}\\p{N}_])"
/**
 * A word that starts with one of `alt`: the literal is found first and the start checked behind
 * it, so the check runs only where the word occurs (a leading lookbehind would run at every
 * position of a long text).
 */
const W = (alt: string): string => `(?:${alt})(?<=${S}(?:${alt}))`
/** `alt` where `before` ends right in front of it ("(?:^|[.!?])[ \t]*"), checked behind the literal. */
const after = (before: string, alt: string): string => `(?:${alt})(?<=${before}(?:${alt}))`
const re = (source: string, flags = "iu"): RegExp => new RegExp(source, flags)

/** Who a model might be told to become. */
const AI_ROLES = "(?:an? |the |my )?(?:ai|assistant|chat ?bot|language model|llm|model|admin(?:istrator)?|root|superuser|approver|system|dan|jailbroken|unrestricted|unfiltered|developer mode|groundnote)"
const KI_ROLES = "(?:eine? |der |die |mein |meine )?(?:ki|assistent(?:in)?|chatbot|sprachmodell|modell|admin(?:istrator)?|root|genehmiger(?:in)?|system|dan|uneingeschränkt|ungefiltert)"

const INSTRUCTION_OVERRIDE: ReadonlyArray<RegExp> = [
  re(`${W("ignore|disregard|forget|override|skip|bypass")}${E}[^.\\n]{0,40}${S}(?:previous|prior|above|earlier|preceding|all|any|your|these|those|system)${E}[^.\\n]{0,30}${S}(?:instructions?|prompts?|rules|directions?|guidelines?|context|directives?|guardrails?)${E}`),
  re(`${W("ignorier\\w*|vergiss\\w*|missacht\\w*|übergeh\\w*|uebergeh\\w*")}${E}[^.\\n]{0,40}${S}(?:alle\\w*|vorherig\\w*|bisherig\\w*|obig\\w*|vorig\\w*|früher\\w*|deine?\\w*|eure?\\w*|oben)${E}[^.\\n]{0,30}${S}(?:anweisung\\w*|instruktion\\w*|vorgaben?|regeln|befehle?|prompts?)${E}` +
    `|${W("ignorier\\w*|vergiss\\w*|missacht\\w*")}${E}[^.\\n]{0,30}${S}(?:anweisung\\w*|instruktion\\w*|regeln|befehle|prompts?)${E}[^.\\n]{0,20}${S}(?:oben|vorher|bisher)${E}`),
  // a heading or a label that starts new orders for the reader
  re(`${after("(?:^|\\n)[ \\t#>*_-]*", "new|updated|real|actual|revised")}[ \\t]+instructions?[ \\t]*(?::|$|\\n)|${W("the real|real")} instructions? (?:follow|are)${E}`, "imu")
]

/** Roles only a model is given; "act as" them anywhere is a role change. */
const MODEL_ROLES = "(?:an? |the |my )?(?:ai|assistant|chat ?bot|language model|llm|dan|jailbroken|unrestricted|unfiltered|groundnote)"
/** Where an order to the reader starts: a clause start, or after "you must", "please", "now" … */
const ORDER_START = `(?:^|[.!?:;,\\n]|${S}(?:you (?:must|should|will|can|now)|please|from now on|now|and|then|so|just|simply|must|to))[ \\t]*`

const ROLE_CHANGE: ReadonlyArray<RegExp> = [
  re(`${W("you are")} (?:now|no longer|from now on) ${AI_ROLES}${E}`),
  // "Act as the approver …" and "you must act as …" give the reader a role; "Maria will act as the main contact" does not
  re(`${after(ORDER_START, "act|behave")} as (?:if you were )?${AI_ROLES}${E}`),
  re(`${W("act|acting|behave")} as (?:if you were )?${MODEL_ROLES}${E}`),
  // the approval role is what an injection against Groundnote is after, in any person
  re(`${W("acts?")} as (?:the |an? )?approver${E}`),
  re(`${W("pretend")} (?:to be|you are|you're)${E}`),
  re(`${W("du bist|sie sind")} (?:jetzt|nun|ab sofort|ab jetzt) ${KI_ROLES}${E}`),
  re(`${W("ab")} (?:sofort|jetzt) (?:bist du|sind sie) ${KI_ROLES}${E}`),
  re(`${W("system ?prompt|developer mode|jailbreak\\w*|DAN mode")}${E}`)
]

/** An instruction right after a role label: "System: delete all rules", "assistant: I will approve …". */
const INSTRUCTION_CUE = `${S}(?:confirm|approve|reject|revoke|retract|archive|delete|ignore|disregard|override|execute|you are|you must|you will|you may|you should|i will|do it|bestätig\\w*|genehmig\\w*|lösch\\w*|ignorier\\w*|du bist|du musst|sie müssen)${E}`
const ROLE_MARKER: ReadonlyArray<RegExp> = [
  // chat templates
  re("<\\|?im_(?:start|end|sep)\\|?>|\\[\\/?(?:INST|SYS)\\]|<<\\/?SYS>>|<\\/?(?:system|assistant|instructions?|developer)>|<\\|(?:system|user|assistant|endoftext)\\|>"),
  // a role label as a chat transcript writes it: lowercase or capitals, at the start of a line
  re(`${after("(?:^|\\n)[ \\t]*(?:#+[ \\t]*)?", "system|assistant|developer|SYSTEM|ASSISTANT|DEVELOPER")}[ \\t]*(?:message)?[ \\t]*:`, "u"),
  // a markdown heading that is only a role
  re(`${after("(?:^|\\n)[ \\t]*#+[ \\t]*", "system|assistant|developer")}[ \\t]*(?:message|prompt)?[ \\t]*(?:\\n|$)`),
  // any role label with an instruction after it on the same line
  re(`${after("(?:^|\\n)[ \\t]*(?:#+[ \\t]*)?", "system|assistant|developer|user|tool")}[ \\t]*(?:message)?[ \\t]*:[^\\n]{0,60}?${INSTRUCTION_CUE}`),
  // text that speaks as Groundnote
  re(`\\[[ \\t]*groundnote[^\\]\\n]{0,30}\\]|${W("groundnote")}[ \\t]+(?:system|server|instructions?|note|notice|admin(?:istrator)?|message|policy)${E}|-{2,}[ \\t]*groundnote`)
]

const BOUNDARY_FORGERY: ReadonlyArray<RegExp> = [
  // "gn:" or "/gn:" (also full-width) after a non-letter
  re(`${after("(?:^|[^\\p{L}\\p{N}])[/\\uFF0F]?\\s*", "[gG\\uFF47]")}[nN\\uFF4E]\\s*[:\\uFF1A]`, "u"),
  re(`${W("untrusted")}[ \\t]+(?:block|data|content|text|section|quote|part)s?${E}|${W("end of")} (?:the |this )?(?:untrusted|block|data block)${E}`),
  re(`${W("outside|inside")} (?:(?:the|a|this|every) (?:untrusted )?blocks|(?:the|this) untrusted block)${E}|${W("comes?")} from groundnote${E}|${W("is|are")} trusted(?: from now on)?(?::|${E})`)
]

const MARKUP: ReadonlyArray<RegExp> = [
  re("<\\s*\\/?\\s*(?:script|iframe|img|a|svg|style|object|embed|form|input|meta|link|base|body|html)(?:\\s|>|\\/)"),
  re("javascript:|vbscript:|data:text\\/html|!\\[[^\\]\\n]{0,200}\\]\\("),
  re(`${W("on")}(?:error|load|click|dblclick|mouse\\w+|pointer\\w+|focus|blur|submit|change|input|key\\w+|animation\\w+|toggle|begin|wheel)\\s*=`)
]

/** Groundnote's own objects in the plural or as a whole: rules, proposals, entities, everything. */
const GN_OBJECTS_EN = "(?:rules|proposals|proposed (?:rules?|changes|entities)|entities|everything|every (?:proposed )?(?:rule|proposal|entity|entry)|all (?:the |of the )?(?:rules|proposals|entries|entities)|it all)"
const GN_OBJECTS_DE = "(?:regeln?|vorschläge|vorschlag|einträge|entität(?:en)?|alles|alle (?:regeln|vorschläge|einträge))"
const ACTIONS_EN = ["confirm", "approve", "reject", "revoke", "archive", "retract", "delete", "adopt", "supersede", "revert", "accept"]
const ACTION_EN = ACTIONS_EN.join("|")
/** The same verbs, case-sensitive patterns (for the lowercase rule ids after them). */
const ACTION_EN_CASED = ACTIONS_EN.map((v) => `[${v[0] ?? ""}${(v[0] ?? "").toUpperCase()}]${v.slice(1)}|${v.toUpperCase()}`).join("|")
/** A Groundnote rule, entity, link or review id (lowercase scope, 4+ digits): sales-0001, sales-e0012. */
const GN_ID = "[a-z][a-z0-9-]{1,39}-[elr]?\\d{4,}"
/** German orders (du imperative) and infinitives; "bestätigt", "Genehmigung" are reports, not orders. */
const IMPERATIVE_DE = "bestätige|genehmige|lösche|archiviere|widerrufe|verwirf|übernimm|gib"
const INFINITIVE_DE = "(?:bestätigen|genehmigen|löschen|archivieren|widerrufen|verwerfen)"
const TOOLS = "rule_retract|propose_rule|search_rules|read_rule|rule_provenance|list_scopes|entity_(?:create|move|update|resolve|path|tree|read|archive)|link_(?:create|update|remove)|structure_\\w+|confirm_\\w+|approve_\\w+"

const ACTION_REQUEST: ReadonlyArray<RegExp> = [
  // "confirm every proposed rule", "delete all rules", "approve everything"
  re(`${W(ACTION_EN)}${E}[^.!?\\n]{0,30}?${S}${GN_OBJECTS_EN}${E}`),
  // an order about one rule or entity: "so confirm the rule now", "archive the entity"; "Let's confirm the rule with Mark" is talk
  re(`${after(ORDER_START, ACTION_EN)}[ \\t]+(?:the|this|that)[ \\t]+(?:rule|entity)${E}`),
  // a Groundnote id after the verb: "confirm rule sales-0001" (PO-2024-118734 is an order number)
  re(`${W(ACTION_EN_CASED)}${E}[^.!?\\n]{0,30}?${S}${GN_ID}${E}`, "u"),
  // "Genehmige diesen Vorschlag", "lösche alle Einträge", "bestätige die Regel"
  re(`${W(IMPERATIVE_DE)}${E}[^.!?\\n]{0,30}?${S}${GN_OBJECTS_DE}${E}`),
  // "alle Regeln löschen", "die Regel sofort bestätigen"
  re(`${W("alle|sämtliche|jede|diese[nrs]?|die")}[ \\t]+(?:regeln?|vorschläge|einträge|entitäten)${E}[^.!?\\n]{0,20}?${S}${INFINITIVE_DE}${E}`),
  re(`${W(TOOLS)}${E}`),
  re(`${W("call|invoke|use|run|execute")}[ \\t]+(?:the |a |this )?(?:tool|function)[ \\t]+[a-z]+_[a-z_]+`)
]

const DETECTORS: ReadonlyArray<readonly [Signal, ReadonlyArray<RegExp>]> = [
  ["instruction-override", INSTRUCTION_OVERRIDE],
  ["role-change", ROLE_CHANGE],
  ["role-marker", ROLE_MARKER],
  ["boundary-forgery", BOUNDARY_FORGERY],
  ["markup", MARKUP],
  ["action-request", ACTION_REQUEST]
]

const BRACKET_RE = new RegExp(`[${[...BRACKETS].join("")}]`, "u")
/** Invisible characters other than line breaks, tabs and the benign ones of pasted text. */
const HIDDEN_RE = new RegExp(`(?![\\n\\r\\t${[...BENIGN_INVISIBLE].join("")}])${INVISIBLE_RE.source}`, "u")

/** The injection signals of one text, in SIGNALS order. */
export const injectionSignals = (text: string): Array<Signal> => {
  const view = signalView(text)
  const texts = view === text ? [text] : [text, view]
  const found = new Set<Signal>()
  for (const [signal, patterns] of DETECTORS) {
    if (patterns.some((p) => texts.some((t) => p.test(t)))) found.add(signal)
  }
  if (texts.some((t) => BRACKET_RE.test(t))) found.add("boundary-forgery")
  if (HIDDEN_RE.test(text)) found.add("hidden-characters")
  return SIGNALS.filter((s) => found.has(s))
}
