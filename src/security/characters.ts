/**
 * Characters foreign text must not use to fake Groundnote's framing (architecture.md §9): the
 * brackets that are, or look like, the block markers ⟪ ⟫, and the invisible characters. Shared
 * by the escaping of model-output.ts and the injection signals of signals.ts.
 */

/** Brackets that are, or look like, the block markers ⟪ ⟫. */
export const BRACKETS: ReadonlySet<string> = new Set([
  "\u27EA", "\u27EB", // ⟪ ⟫
  "\u300A", "\u300B", // 《 》
  "\u226A", "\u226B", // ≪ ≫
  "\u2E28", "\u2E29", // ⸨ ⸩
  "\uFF5F", "\uFF60", // ｟ ｠
  "\u2985", "\u2986", // ⦅ ⦆
  "\u3018", "\u3019", // 〘 〙
  "\u301A", "\u301B", // 〚 〛
  "\u27E6", "\u27E7", // ⟦ ⟧
  "\u27E8", "\u27E9" // ⟨ ⟩
])

/** Control and format characters (zero-width, bidi, tags, soft hyphen, BOM), private use, surrogates, line/paragraph separators. */
export const INVISIBLE_RE = /[\p{Cc}\p{Cf}\p{Co}\p{Cs}\p{Zl}\p{Zp}]/u
