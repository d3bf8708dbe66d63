/**
 * German and English stopwords of stage a (architecture.md §7 step 1), lowercase, after NFKC.
 * Function words only: no business noun, no number, no unit. Negations (nicht, kein, no, not)
 * are stopwords too: a lexical match cannot honour them, and they would match almost every rule.
 */
import type { Language } from "./options.js"

const DE = `
ab aber alle allem allen aller alles als also am an ander andere anderem anderen anderer anderes
auch auf aus bei beim bin bis bist bitte da dabei dadurch dafür dagegen daher dahin damit danach
dann daran darauf daraus darf darfst darin darum darunter das dass daß davon davor dazu dein deine
deinem deinen deiner dem demnach den denen denn der deren des deshalb dessen dich die dies diese diesem
diesen dieser dieses dir doch dort du durch eben ein eine einem einen einer eines einige einigem
einigen einiger einiges einmal er es etwa etwas euch euer eure eurem euren eurer für gegen gewesen
hab habe haben hat hatte hatten hier hin hinter ich ihm ihn ihnen ihr ihre ihrem ihren ihrer ihres
im immer in indem ins ist ja je jede jedem jeden jeder jedes jedoch jene jenem jenen jener jenes
jetzt kann kannst kein keine keinem keinen keiner keines können könnt könnte man manche manchem
manchen mancher manches mehr mein meine meinem meinen meiner meines mich mir mit muss musst müssen
nach nachdem nein nicht nichts noch nun nur ob oder ohne sehr sein seine seinem seinen seiner
seines seit selbst sich sie sind so solche solchem solchen solcher solches soll sollen sollte
sollten sondern sonst sowie über um und uns unser unsere unserem unseren unserer unter viel viele
vom von vor wann war waren warum was weil welche welchem welchen welcher welches wenn wer werde
werden wie wieder will wir wird wirst wo wollen wollte worden wurde wurden zu zum zur zwar zwischen
während wegen trotz statt außer ausser innerhalb außerhalb ausserhalb bzw gegenüber laut per pro samt
bevor sobald solange obwohl obgleich sodass sowohl weder entweder wobei wohingegen
`

const EN = `
a about above after again against all am an and any are as at be because been before being below
between both but by can cannot could did do does doing down during each either else ever every few
for from further had has have having he her here hers herself him himself his how i if in into is
it its itself just let me more most must my myself neither no nor not of off on once only or other
ought our ours ourselves out over own please same shall she should so some such than that the their
theirs them themselves then there these they this those through to too under until up upon us very
was we were what when where which while who whom whose why will with within without would yet you
your yours yourself yourselves although though unless whether whereas
`

const set = (words: string): ReadonlySet<string> => new Set(words.split(/\s+/).filter((w) => w.length > 0))

export const STOPWORDS: Readonly<Record<Language, ReadonlySet<string>>> = { de: set(DE), en: set(EN) }

/** True when the lowercase token is a stopword of any configured language. */
export const isStopword = (token: string, languages: ReadonlyArray<Language>): boolean =>
  languages.some((l) => STOPWORDS[l].has(token))

/**
 * Mail small talk: words of the frame inside the body (wishes, thanks, asking, time of day) that
 * key-term selection never picks (architecture.md §7 step 1, "not dominated by small talk").
 */
const CHATTER_DE = `
hallo hi moin servus liebe lieber hoffe hoffentlich schön schöne schönes schönen wochenende wetter urlaub
kurz kurze kurzer kurzes frage fragen kannst könntest könnten würdest würde würden wollte wollten
bitte danke dank dankeschön gerne gern melden meldung rückmeldung info infos anbei grüße gruß beste besten
freundlichen geehrte geehrter heute morgen gestern vorhin gleich irgendwas irgendwie einfach eigentlich leider
trotzdem mal schon ja usw etc ok okay super toll prima klar genau vielen denke glaube finde
`
const CHATTER_EN = `
hi hello hey dear hope hoping hopefully well weekend holiday quick question questions thanks thank please
let know like would could wondering wanted regards cheers attached attachment kind best great good nice
today yesterday tomorrow sure ok okay soon asap just really also still think guess lovely
`

const chatter = (words: string): ReadonlySet<string> =>
  new Set(words.split(/\s+/).filter((w) => w.length > 0))

export const MAIL_CHATTER: Readonly<Record<Language, ReadonlySet<string>>> = { de: chatter(CHATTER_DE), en: chatter(CHATTER_EN) }

export const isChatter = (token: string, languages: ReadonlyArray<Language>): boolean =>
  languages.some((l) => MAIL_CHATTER[l].has(token))
