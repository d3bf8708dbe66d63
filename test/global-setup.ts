/** Builds dist/ once before the suite: the e2e tests run the built CLI as an operator would. */
import { execFileSync } from "node:child_process"
import { join } from "node:path"

export default function setup(): void {
  const root = join(import.meta.dirname, "..")
  execFileSync(process.execPath, [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", join(root, "tsconfig.build.json")], {
    cwd: root,
    stdio: "inherit"
  })
}
