/** Where a JSON text first goes wrong, as an offset and a line and column (JSON.parse does not always say). */
/** Offset of the first JSON syntax error in `text` (JSON.parse does not always say where). */
export const jsonErrorOffset = (text: string): number => {
  let i = 0
  const ws = () => {
    while (i < text.length && " \t\n\r".includes(text[i] as string)) i++
  }
  const fail = (): never => {
    throw i
  }
  const literal = (word: string) => {
    for (const ch of word) {
      if (text[i] !== ch) fail()
      i++
    }
  }
  const string = () => {
    i++ // opening quote
    for (;;) {
      if (i >= text.length) fail()
      const c = text.charCodeAt(i)
      if (c === 0x22) {
        i++
        return
      }
      if (c < 0x20) fail()
      if (c === 0x5c) {
        i++
        const e = text[i]
        if (e === "u") {
          i++
          for (let k = 0; k < 4; k++) {
            if (!/[0-9a-fA-F]/.test(text[i] ?? "")) fail()
            i++
          }
        } else if (e !== undefined && "\"\\/bfnrt".includes(e)) {
          i++
        } else {
          fail()
        }
      } else {
        i++
      }
    }
  }
  const number = () => {
    const m = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(text.slice(i))
    if (m === null) fail()
    else i += m[0].length
  }
  const value = (): void => {
    ws()
    const c = text[i]
    if (c === "{") {
      i++
      ws()
      if (text[i] === "}") {
        i++
        return
      }
      for (;;) {
        ws()
        if (text[i] !== "\"") fail()
        string()
        ws()
        if (text[i] !== ":") fail()
        i++
        value()
        ws()
        if (text[i] === ",") {
          i++
          continue
        }
        if (text[i] === "}") {
          i++
          return
        }
        fail()
      }
    } else if (c === "[") {
      i++
      ws()
      if (text[i] === "]") {
        i++
        return
      }
      for (;;) {
        value()
        ws()
        if (text[i] === ",") {
          i++
          continue
        }
        if (text[i] === "]") {
          i++
          return
        }
        fail()
      }
    } else if (c === "\"") {
      string()
    } else if (c === "t") {
      literal("true")
    } else if (c === "f") {
      literal("false")
    } else if (c === "n") {
      literal("null")
    } else if (c === "-" || (c !== undefined && c >= "0" && c <= "9")) {
      number()
    } else {
      fail()
    }
  }
  try {
    value()
    ws()
    if (i < text.length) fail()
    return -1
  } catch (at) {
    if (typeof at === "number") return Math.min(at, text.length)
    throw at
  }
}

export const lineColumn = (text: string, offset: number): { line: number; column: number } => {
  const before = text.slice(0, offset)
  const lines = before.split("\n")
  return { line: lines.length, column: (lines[lines.length - 1] ?? "").length + 1 }
}
