/**
 * The Litestream config text of a data dir (src/backup/litestream-config.ts): replica URLs under
 * backup.target and backup.prefix, the age block only for keyed files, identities only in a
 * restore's temporary config, and a `$` (which Litestream would expand) refused.
 */
import { describe, expect, it } from "vitest"
import { LitestreamConfigInvalid, litestreamConfigText, litestreamDbs, litestreamMetaDir, replicaUrl, restoreConfigText } from "../../src/backup/litestream-config.js"

const R1 = `age1${"q".repeat(58)}`
const R2 = `age1${"p".repeat(58)}`
const recipients = { active: new Map<string | null, ReadonlyArray<string>>([["sales", [R1, R2]]]), keyed: new Set<string | null>(["sales"]) }

describe("litestream config", () => {
  it("names each replica <target>/<prefix>/ops or …/scopes/<scope>, whatever slashes target and prefix carry", () => {
    expect(replicaUrl({ target: "s3://acme-backups", prefix: "groundnote" }, { kind: "ops" })).toBe("s3://acme-backups/groundnote/ops")
    expect(replicaUrl({ target: "s3://acme-backups/", prefix: "/groundnote/" }, { kind: "scope", scope: "sales" })).toBe("s3://acme-backups/groundnote/scopes/sales")
    expect(replicaUrl({ target: "file:///srv/replica", prefix: "gn/eu" }, { kind: "scope", scope: "sales" })).toBe("file:///srv/replica/gn/eu/scopes/sales")
  })

  it("writes ops.sqlite first and every configured scope in order; recipients only where the file is keyed", () => {
    const input = { dataDir: "/srv/gn/data", scopes: ["sales", "support"], target: { target: "s3://b", prefix: "gn" }, recipients }
    expect(litestreamDbs(input).map((d) => [d.path, d.url, d.recipients.length])).toEqual([
      ["/srv/gn/data/ops.sqlite", "s3://b/gn/ops", 0],
      ["/srv/gn/data/scopes/sales.sqlite", "s3://b/gn/scopes/sales", 2],
      ["/srv/gn/data/scopes/support.sqlite", "s3://b/gn/scopes/support", 0]
    ])
    const text = litestreamConfigText(input)
    expect(text).toContain("# Encrypted with age to their recipients: sales.\n")
    expect(text.split("\n").filter((l) => !l.startsWith("#"))).toEqual([
      "dbs:",
      "  - path: \"/srv/gn/data/ops.sqlite\"", "    replicas:", "      - url: \"s3://b/gn/ops\"",
      "  - path: \"/srv/gn/data/scopes/sales.sqlite\"", "    replicas:", "      - url: \"s3://b/gn/scopes/sales\"",
      "        age:", "          recipients:", `            - "${R1}"`, `            - "${R2}"`,
      "  - path: \"/srv/gn/data/scopes/support.sqlite\"", "    replicas:", "      - url: \"s3://b/gn/scopes/support\"",
      ""
    ])
    expect(text).not.toContain("identities")
  })

  it("a restore's temporary config carries the identities of its one file", () => {
    const [, sales] = litestreamDbs({ dataDir: "/d", scopes: ["sales"], target: { target: "file:///r", prefix: "p" }, recipients })
    if (sales === undefined) throw new Error("no entry")
    expect(restoreConfigText(sales, ["AGE-SECRET-KEY-1ABC"])).toBe([
      "dbs:", "  - path: \"/d/scopes/sales.sqlite\"", "    replicas:", "      - url: \"file:///r/p/scopes/sales\"",
      "        age:", "          identities:", "            - \"AGE-SECRET-KEY-1ABC\"", "          recipients:", `            - "${R1}"`, `            - "${R2}"`, ""
    ].join("\n"))
  })

  it("refuses a $ in a path or URL instead of letting Litestream expand it; quotes a path with spaces and colons", () => {
    expect(() => litestreamConfigText({ dataDir: "/srv/$HOME/data", scopes: [], target: { target: "s3://b", prefix: "gn" }, recipients })).toThrow(LitestreamConfigInvalid)
    expect(litestreamConfigText({ dataDir: "/srv/my data: x", scopes: [], target: { target: "s3://b", prefix: "gn" }, recipients })).toContain("  - path: \"/srv/my data: x/ops.sqlite\"\n")
  })

  it("finds Litestream's own directory beside a live file", () => {
    expect(litestreamMetaDir("/srv/gn/data/scopes/sales.sqlite")).toBe("/srv/gn/data/scopes/.sales.sqlite-litestream")
  })
})
