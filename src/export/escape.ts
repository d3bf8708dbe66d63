/**
 * Escaping of foreign text for the Markdown export (architecture.md §4.4).
 *
 * Foreign text is normalized (CRLF, CR, NEL, U+2028, U+2029 → LF) and every character that could
 * start Markdown or HTML structure is backslash-escaped, so a statement, quote, title or name can
 * never form a link, tag, heading, list, table cell or entity — in CommonMark, in GFM and in
 * markdown-it with linkify. Everything else stays as it is, so the rendered text is the original.
 */

/** CRLF, CR, NEL (U+0085), LINE SEPARATOR (U+2028) and PARAGRAPH SEPARATOR (U+2029) → LF. */
export const normalizeNewlines = (s: string): string => s.replace(/\r\n|[\r\u0085\u2028\u2029]/g, "\n")

/** Escaped wherever they occur: the contract's set plus `#` (headings), `@` (mail autolinks), `&` (entities). */
const ALWAYS = new Set(["\\", "`", "|", "[", "]", "<", ">", "#", "@", "&"])
/** Escaped as the first character of a line (after optional blanks): setext, lists, breaks, fences. */
const LINE_START = new Set(["=", "-", "+", "*", "_", "~"])

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= "0" && c <= "9"

/**
 * Normalizes line breaks and backslash-escapes the Markdown/HTML characters of foreign text.
 *
 * - everywhere: \ ` | [ ] < > # @ &
 * - `:` followed by `//` and every `/` followed by `/` (no URL or protocol-relative autolinks)
 * - the `.` of `www.` (no GFM www autolinks)
 * - at the start of a line after optional blanks: = - + * _ ~, and the `.`/`)` after a digit run
 *   (no setext heading, list item, thematic break or code fence)
 *
 * The start of the string counts as the start of a line, so the result is safe both inline
 * (after a server-made label) and as a block of its own.
 */
export const escapeForeign = (input: string): string => {
  const s = normalizeNewlines(input)
  let out = ""
  let lineStart = true
  let escapeAt = -1 // index of the `.`/`)` closing a digit run at a line start
  for (let i = 0; i < s.length; i++) {
    const c = s[i] as string
    if (c === "\n") {
      out += c
      lineStart = true
      continue
    }
    let escape = ALWAYS.has(c) || i === escapeAt
    if (lineStart && c !== " " && c !== "\t") {
      lineStart = false
      if (LINE_START.has(c)) {
        escape = true
      } else if (isDigit(c)) {
        let j = i
        while (isDigit(s[j])) j++
        if (s[j] === "." || s[j] === ")") escapeAt = j
      }
    }
    if (c === ":" && s.startsWith("//", i + 1)) escape = true
    if (c === "/" && s[i + 1] === "/") escape = true
    if (c === "." && i >= 3 && s.slice(i - 3, i).toLowerCase() === "www") escape = true
    out += escape ? `\\${c}` : c
  }
  return out
}

/** True when the (normalized) text spans more than one line. */
export const isMultiline = (s: string): boolean => normalizeNewlines(s).includes("\n")

/**
 * Foreign text as a paragraph block of its own: escaped, leading and trailing blank lines dropped,
 * every line prefixed with `indent` (to stay inside a list item). Leading blanks of a line become
 * character references, so indentation survives and never turns into an indented code block.
 * Lines holding only blanks become empty lines. The caller surrounds the block with blank lines.
 */
export const foreignBlock = (text: string, indent = ""): string => {
  const lines = escapeForeign(text).split("\n").map((line) => (/^[ \t]*$/.test(line) ? "" : line))
  while (lines.length > 0 && lines[0] === "") lines.shift()
  while (lines.length > 0 && lines[lines.length - 1] === "") lines.pop()
  return lines
    .map((line) => {
      if (line === "") return ""
      const body = line.replace(/^[ \t]+/, (blanks) => blanks.replace(/ /g, "&#32;").replace(/\t/g, "&#9;"))
      return `${indent}${body}`
    })
    .join("\n")
}
