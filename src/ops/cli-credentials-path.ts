/** Where the CLI's credentials file lies, without Effect (config path answers from here quickly). */
import { isAbsolute, join } from "node:path"

/** $XDG_CONFIG_HOME/groundnote/cli.json; a relative XDG_CONFIG_HOME is ignored (XDG base directory spec). */
export const credentialsPath = (env: Readonly<Record<string, string | undefined>>, home: string): string => {
  const xdg = env.XDG_CONFIG_HOME
  return join(xdg !== undefined && xdg !== "" && isAbsolute(xdg) ? xdg : join(home, ".config"), "groundnote", "cli.json")
}
