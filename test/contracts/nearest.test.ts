/** The known word nearest to a mistyped one (src/contracts/nearest.ts): config keys, CLI commands. */
import { describe, expect, it } from "vitest"
import { editDistance, nearestKey } from "../../src/contracts/nearest.js"

describe("did you mean …?", () => {
  it("measures edits with adjacent transpositions as one", () => {
    expect(editDistance("serach", "search")).toBe(1)
    expect(editDistance("directry", "directory")).toBe(1)
    expect(editDistance("foo", "prf")).toBe(3)
    expect(editDistance("", "abc")).toBe(3)
  })

  it("suggests within 1 edit for short keys, 2 for longer ones, a prefix of 4+, case ignored; else nothing", () => {
    const keys = ["search", "scopes", "backup", "limits", "graph", "deadman_url", "directory"]
    expect(nearestKey("serach", keys)).toBe("search")
    expect(nearestKey("Search", keys)).toBe("search")
    expect(nearestKey("grpah", keys)).toBe("graph")
    expect(nearestKey("deadman", keys)).toBe("deadman_url")
    expect(nearestKey("limts", keys)).toBe("limits")
    expect(nearestKey("colour", keys)).toBeNull()
    expect(nearestKey("foo", ["stem", "prf", "fuzzy"])).toBeNull()
  })
})
