/**
 * A worker thread for the lexicon's test: looks terms up in the lexicon of the image it is given
 * (workerData.image, lexiconOverImage) and answers the groups found, without reading the file.
 */
import { parentPort, workerData } from "node:worker_threads"
import type { LexiconLang } from "../../src/search/lexical/lexicon.js"
import { lexiconOverImage } from "../../src/search/lexical/lexicon-packed.js"

const data = workerData as { readonly image: SharedArrayBuffer; readonly probes: ReadonlyArray<readonly [LexiconLang, string]> }
const lexicon = lexiconOverImage(data.image)
parentPort?.postMessage({ groups: lexicon.groups, terms: lexicon.terms, found: data.probes.map(([lang, term]) => lexicon.groupsOf(lang, term)) })
