/**
 * The CLI's text for a terminal, without Effect (the quick commands of cli-quick.ts load nothing
 * heavier): terminal-safe escaping, the --json text and the failure line.
 */

/** Control characters and bidi overrides are escaped; with `lines`, line breaks (and tabs) stay. */
const unsafeChar = (code: number, lines: boolean): boolean =>
  ((code <= 0x1f && !(lines && (code === 0x0a || code === 0x09))) || (code >= 0x7f && code <= 0x9f) ||
    (code >= 0x202a && code <= 0x202e) || (code >= 0x2066 && code <= 0x2069) || code === 0x2028 || code === 0x2029)

export const terminalSafe = (text: string, options: { readonly lines?: boolean } = {}): string =>
  Array.from(text.replace(/\r\n/g, "\n"), (c) => {
    const code = c.codePointAt(0) ?? 0
    return unsafeChar(code, options.lines === true) ? `\\u${code.toString(16).padStart(4, "0")}` : c
  }).join("")

export const jsonText = (value: unknown): string => JSON.stringify(value, null, 2)

/** The stderr line of a failure with a code: `groundnote: <code>: <message>`, line breaks kept, nothing else can steer the terminal. */
export const failureText = (text: string): string => `groundnote: ${terminalSafe(text, { lines: true })}`
